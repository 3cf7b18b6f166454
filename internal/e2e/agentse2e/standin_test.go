package agentse2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// standIn stands in for a model API on 127.0.0.1: OpenAI's Responses API
// for Codex CLI (its model_providers base_url), Google's Gemini API for
// Gemini CLI (GOOGLE_GEMINI_BASE_URL). The conversation's requests (those
// that offer tools) are answered with the script's steps, one per request,
// streamed as server-sent events like the real APIs; the other requests
// Gemini CLI makes (its model router's JSON questions, token counts) get a
// small valid answer. One stand-in serves one agent process.
type standIn struct {
	t    *testing.T
	kind string // "codex" or "gemini"
	srv  *httptest.Server

	mu      sync.Mutex
	steps   []step
	next    int
	turns   int      // conversation requests answered
	outputs []string // the tool outputs the agent sent back, in order
	bodies  []string // every conversation request's body
	log     []string
	held    chan struct{} // closed when a Hold step is reached
	holdOne sync.Once
}

// A step is one answer of the scripted model: a shell command (Shell), a
// final text (Text), or Hold: no answer until the agent goes away (a
// model thinking while the agent is killed). Then, if set, computes the
// step from the output of the previous command.
type step struct {
	Shell string
	Call  string         // another tool of the agent's, by name
	Args  map[string]any // Call's arguments
	Text  string
	Hold  bool
	Then  func(prev string) step
	// Body, if set, computes the step from the whole request (what a
	// Stop hook that blocked told the agent is in it).
	Body func(body string) step
}

func newStandIn(t *testing.T, kind string, steps ...step) *standIn {
	a := &standIn{t: t, kind: kind, steps: steps, held: make(chan struct{})}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(func() {
		a.srv.Close()
		if t.Failed() {
			a.mu.Lock()
			defer a.mu.Unlock()
			t.Logf("%s stand-in: %d requests:\n  %s\ntool outputs: %q", kind, len(a.log), strings.Join(a.log, "\n  "), a.outputs)
		}
	})
	return a
}

// URL is the base URL the agent is pointed at.
func (a *standIn) URL() string { return a.srv.URL }

// Outputs returns the tool outputs the agent sent back so far.
func (a *standIn) Outputs() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.outputs...)
}

// Bodies returns the bodies of the conversation requests so far.
func (a *standIn) Bodies() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.bodies...)
}

// progress counts the requests so far: hang bounds run from the last one.
func (a *standIn) progress() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.log)
}

func (a *standIn) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	a.log = append(a.log, fmt.Sprintf("%s %s %s (%d bytes)", time.Now().Format("15:04:05.000"), r.Method, r.URL.Path, len(body)))
	a.mu.Unlock()
	switch {
	case a.kind == "codex" && r.URL.Path == "/v1/responses":
		a.turn(w, r, body, codexOutput(body))
	case a.kind == "gemini" && strings.HasSuffix(r.URL.Path, ":streamGenerateContent") && strings.Contains(string(body), `"functionDeclarations"`):
		a.turn(w, r, body, geminiOutput(body))
	case a.kind == "gemini" && strings.HasSuffix(r.URL.Path, ":countTokens"):
		_ = json.NewEncoder(w).Encode(map[string]any{"totalTokens": 1})
	case a.kind == "gemini" && (strings.HasSuffix(r.URL.Path, ":generateContent") || strings.HasSuffix(r.URL.Path, ":streamGenerateContent")):
		// The router's and the loop checker's questions: an answer
		// that fits the schema asked for.
		var req struct {
			GenerationConfig struct {
				Schema map[string]any `json:"responseJsonSchema"`
			} `json:"generationConfig"`
		}
		_ = json.Unmarshal(body, &req)
		text, _ := json.Marshal(fitSchema(req.GenerationConfig.Schema))
		resp := geminiText(string(text))
		if strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
			w.Header().Set("Content-Type", "text/event-stream")
			b, _ := json.Marshal(resp)
			fmt.Fprintf(w, "data: %s\n\n", b)
			return
		}
		_ = json.NewEncoder(w).Encode(resp)
	default:
		http.NotFound(w, r)
	}
}

// turn answers one conversation request with the next step.
func (a *standIn) turn(w http.ResponseWriter, r *http.Request, body []byte, prev string) {
	a.mu.Lock()
	a.bodies = append(a.bodies, string(body))
	if a.turns > 0 {
		a.outputs = append(a.outputs, prev)
	}
	a.turns++
	s := step{Text: "Nothing more to do; stopping."}
	if a.next < len(a.steps) {
		s = a.steps[a.next]
		a.next++
	}
	a.mu.Unlock()
	if s.Then != nil {
		s = s.Then(prev)
	}
	if s.Body != nil {
		s = s.Body(string(body))
	}
	if s.Hold {
		a.holdOne.Do(func() { close(a.held) })
		<-r.Context().Done() // the agent went away
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	call := fmt.Sprintf("call_%d", a.turns)
	if a.kind == "codex" {
		id := "resp_" + call
		event := func(name string, v map[string]any) {
			v["type"] = name
			b, _ := json.Marshal(v)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
			flush()
		}
		event("response.created", map[string]any{"response": map[string]any{"id": id}})
		item := map[string]any{"type": "message", "role": "assistant", "id": "msg_" + call,
			"content": []any{map[string]any{"type": "output_text", "text": s.Text}}}
		if s.Shell != "" {
			s.Call, s.Args = "exec_command", map[string]any{"cmd": s.Shell}
		}
		if s.Call != "" {
			args, _ := json.Marshal(s.Args)
			item = map[string]any{"type": "function_call", "id": "fc_" + call, "call_id": call, "name": s.Call, "arguments": string(args)}
		}
		event("response.output_item.done", map[string]any{"item": item})
		event("response.completed", map[string]any{"response": map[string]any{"id": id,
			"usage": map[string]any{"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}})
		return
	}
	resp := geminiText(s.Text)
	if s.Shell != "" {
		s.Call, s.Args = "run_shell_command", map[string]any{"command": s.Shell}
	}
	if s.Call != "" {
		resp = geminiResponse(map[string]any{"functionCall": map[string]any{"name": s.Call, "args": s.Args}})
	}
	b, _ := json.Marshal(resp)
	fmt.Fprintf(w, "data: %s\n\n", b)
	flush()
}

// codexOutput is the output of the last command, from a Responses API
// request: its last function_call_output item.
func codexOutput(body []byte) string {
	var req struct {
		Input []struct {
			Type   string          `json:"type"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
	}
	_ = json.Unmarshal(body, &req)
	for i := len(req.Input) - 1; i >= 0; i-- {
		if req.Input[i].Type == "function_call_output" {
			var s string
			if json.Unmarshal(req.Input[i].Output, &s) == nil {
				return s
			}
			return string(req.Input[i].Output)
		}
	}
	return ""
}

// geminiOutput is the output of the last command, from a Gemini API
// request: the last functionResponse's output.
func geminiOutput(body []byte) string {
	var req struct {
		Contents []struct {
			Parts []struct {
				FunctionResponse *struct {
					Response map[string]any `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	_ = json.Unmarshal(body, &req)
	for i := len(req.Contents) - 1; i >= 0; i-- {
		for _, p := range req.Contents[i].Parts {
			if p.FunctionResponse != nil {
				if out, ok := p.FunctionResponse.Response["output"].(string); ok {
					return out
				}
				b, _ := json.Marshal(p.FunctionResponse.Response)
				return string(b)
			}
		}
	}
	return ""
}

func geminiText(text string) map[string]any {
	return geminiResponse(map[string]any{"text": text})
}

func geminiResponse(part map[string]any) map[string]any {
	return map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
	}
}

// fitSchema returns a value that a JSON schema (as Gemini CLI writes them:
// OBJECT, STRING, INTEGER, enum) accepts: the first of an enum, else the
// simplest of its type.
func fitSchema(s map[string]any) any {
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	switch strings.ToLower(fmt.Sprint(s["type"])) {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		for k, v := range props {
			if m, ok := v.(map[string]any); ok {
				out[k] = fitSchema(m)
			}
		}
		return out
	case "integer", "number":
		return 1
	case "boolean":
		return false
	case "array":
		return []any{}
	default:
		return "x"
	}
}

// claimedID returns the id in a `pickup next` output ("claimed ID ..."),
// else "".
func claimedID(out string) string {
	i := strings.Index(out, "claimed ")
	if i < 0 {
		return ""
	}
	id, _, _ := strings.Cut(out[i+len("claimed "):], " ")
	return strings.TrimSpace(id)
}
