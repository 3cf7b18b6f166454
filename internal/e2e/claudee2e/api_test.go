package claudee2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// stubAPI stands in for the Anthropic Messages API. The conversation's
// requests (those that offer the Bash tool) are answered with the script's
// steps, one per request, streamed as server-sent events like the real API;
// everything else the CLI asks (titles, quota checks, token counts, unknown
// endpoints) gets a small valid answer. Every request is logged, and the log
// is printed when the test fails.
type stubAPI struct {
	t   *testing.T
	srv *httptest.Server

	mu      sync.Mutex
	name    string
	steps   []step
	next    int
	pending *toolCall // the last tool call sent, waiting for its result
	results []toolResult
	log     []string
	texts   []string // the text of each conversation request's messages
	errs    []string // the CLI broke the script: a missing tool result, no step left
	dumped  int      // requests written to $PICKUP_E2E_DUMP
}

// A step is one answer of the scripted model: a tool call (Bash, or Tool
// with Input) or, when both are empty, a final text. Then, if set, computes
// the step from the result of the previous step's tool call instead.
type step struct {
	Bash  string
	Tool  string
	Input map[string]any
	Text  string
	Then  func(prev toolResult) step
	// Reply, if set, computes the step from the previous tool result and
	// the text of the messages since the model's last one (a prompt, or
	// what a Stop hook that blocked said).
	Reply func(prev toolResult, since string) step
}

type toolCall struct {
	id    string
	name  string
	input map[string]any
}

// toolResult is what the CLI sent back for one tool call.
type toolResult struct {
	Tool    string
	Input   map[string]any
	Content string
	IsError bool
}

func (r toolResult) String() string {
	return fmt.Sprintf("%s %v -> is_error=%v %q", r.Tool, r.Input, r.IsError, r.Content)
}

func newStubAPI(t *testing.T, name string, steps ...step) *stubAPI {
	a := &stubAPI{t: t, name: name, steps: steps}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(func() {
		a.srv.Close()
		if t.Failed() {
			a.mu.Lock()
			defer a.mu.Unlock()
			t.Logf("stand-in API %q saw %d requests:\n  %s", a.name, len(a.log), strings.Join(a.log, "\n  "))
		}
	})
	return a
}

func (a *stubAPI) URL() string { return a.srv.URL }

// Results returns the tool results the CLI sent, in order.
func (a *stubAPI) Results() []toolResult {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]toolResult(nil), a.results...)
}

// Texts returns, for each conversation request, the text of all its
// messages: the prompt, the skill the CLI expanded, what hooks added.
func (a *stubAPI) Texts() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.texts...)
}

// Saw says whether any conversation request's messages held s.
func (a *stubAPI) Saw(s string) bool {
	for _, text := range a.Texts() {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// Errors says where the CLI did not follow the script.
func (a *stubAPI) Errors() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.errs...)
}

// messagesRequest is the part of a Messages API request the stand-in reads.
type messagesRequest struct {
	Model     string                  `json:"model"`
	Stream    bool                    `json:"stream"`
	MaxTokens int                     `json:"max_tokens"`
	Tools     []struct{ Name string } `json:"tools"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// block is one content block of a message; content is a string or an
// array of blocks.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func blocks(raw json.RawMessage) []block {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []block{{Type: "text", Text: s}}
	}
	var bs []block
	_ = json.Unmarshal(raw, &bs)
	return bs
}

func textOf(raw json.RawMessage) string {
	var parts []string
	for _, b := range blocks(raw) {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (a *stubAPI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if dir := os.Getenv("PICKUP_E2E_DUMP"); dir != "" {
		a.dump(dir, r, body)
	}
	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && path == "/v1/messages/count_tokens":
		a.logf("%s %s -> input_tokens 100", r.Method, r.URL)
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": 100})
	case r.Method == http.MethodPost && path == "/v1/messages":
		var req messagesRequest
		if err := json.Unmarshal(body, &req); err != nil {
			a.logf("%s %s -> 400: %v", r.Method, r.URL, err)
			writeJSON(w, http.StatusBadRequest, apiError("invalid_request_error", err.Error()))
			return
		}
		a.messages(w, r, req)
	default:
		a.logf("%s %s (%d bytes) -> 404", r.Method, r.URL, len(body))
		writeJSON(w, http.StatusNotFound, apiError("not_found_error", "the test's stand-in API has no "+path))
	}
}

func (a *stubAPI) dump(dir string, r *http.Request, body []byte) {
	a.mu.Lock()
	n := a.dumped
	a.dumped++
	a.mu.Unlock()
	name := fmt.Sprintf("%s-%s-%03d.txt", strings.ReplaceAll(a.t.Name(), "/", "_"), a.name, n)
	var hdr strings.Builder
	fmt.Fprintf(&hdr, "%s %s\n", r.Method, r.URL)
	for k, v := range r.Header {
		if strings.EqualFold(k, "x-api-key") || strings.EqualFold(k, "authorization") {
			continue
		}
		fmt.Fprintf(&hdr, "%s: %s\n", k, strings.Join(v, ", "))
	}
	_ = os.WriteFile(filepath.Join(dir, name), append([]byte(hdr.String()+"\n"), body...), 0o644)
}

func (a *stubAPI) logf(format string, args ...any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.log = append(a.log, fmt.Sprintf(format, args...))
}

// messages answers POST /v1/messages.
func (a *stubAPI) messages(w http.ResponseWriter, r *http.Request, req messagesRequest) {
	conversation := false
	for _, tool := range req.Tools {
		conversation = conversation || tool.Name == "Bash"
	}
	last := ""
	if n := len(req.Messages); n > 0 {
		last = textOf(req.Messages[n-1].Content)
	}
	desc := fmt.Sprintf("%s %s model=%s stream=%v max_tokens=%d tools=%d messages=%d last=%q",
		r.Method, r.URL, req.Model, req.Stream, req.MaxTokens, len(req.Tools), len(req.Messages), clip(last, 160))
	if !conversation {
		// A side request: a title, a quota check, a summary. Any short
		// text will do.
		a.mu.Lock()
		a.log = append(a.log, desc+" -> side request, text")
		msgID := fmt.Sprintf("msg_e2e_%s_%03d", a.name, len(a.log))
		a.mu.Unlock()
		writeMessage(w, req, step{Text: "pickup e2e"}, msgID, "")
		return
	}
	a.mu.Lock()
	s, id := a.advance(req)
	a.log = append(a.log, fmt.Sprintf("%s -> %s", desc, s.describe()))
	// Unique, as the real API's: the CLI keys messages by id.
	msgID := fmt.Sprintf("msg_e2e_%s_%03d", a.name, len(a.log))
	a.mu.Unlock()
	writeMessage(w, req, s, msgID, id)
}

// advance records the tool results of the request and picks the next step.
// Called with a.mu held.
func (a *stubAPI) advance(req messagesRequest) (step, string) {
	var all []string
	for _, m := range req.Messages {
		all = append(all, textOf(m.Content))
	}
	a.texts = append(a.texts, strings.Join(all, "\n"))
	var prev toolResult
	got := false
	// The result is in the messages after the last assistant message: the
	// CLI may add a message of its own after it (a reminder).
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role != "assistant"; i-- {
		for _, b := range blocks(req.Messages[i].Content) {
			if b.Type == "tool_result" && a.pending != nil && b.ToolUseID == a.pending.id && !got {
				prev = toolResult{Tool: a.pending.name, Input: a.pending.input, Content: textOf(b.Content), IsError: b.IsError}
				a.results = append(a.results, prev)
				got = true
			}
		}
	}
	if a.pending != nil && !got {
		a.errs = append(a.errs, fmt.Sprintf("the CLI asked again without the result of %s %v", a.pending.name, a.pending.input))
	}
	a.pending = nil
	if a.next >= len(a.steps) {
		a.errs = append(a.errs, "the CLI asked for more steps than the script has")
		return step{Text: "The script has no more steps."}, ""
	}
	s := a.steps[a.next]
	a.next++
	if s.Then != nil {
		s = s.Then(prev)
	}
	if s.Reply != nil {
		var since []string
		for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role != "assistant"; i-- {
			since = append(since, textOf(req.Messages[i].Content))
		}
		s = s.Reply(prev, strings.Join(since, "\n"))
	}
	if s.Bash != "" {
		s.Tool, s.Input = "Bash", map[string]any{"command": s.Bash, "description": "run " + clip(s.Bash, 40)}
	}
	if s.Tool == "" {
		return s, ""
	}
	id := fmt.Sprintf("toolu_e2e_%s_%02d", a.name, a.next)
	a.pending = &toolCall{id: id, name: s.Tool, input: s.Input}
	return s, id
}

func (s step) describe() string {
	switch {
	case s.Bash != "":
		return "Bash " + s.Bash
	case s.Tool != "":
		return fmt.Sprintf("%s %v", s.Tool, s.Input)
	}
	return fmt.Sprintf("text %q", clip(s.Text, 60))
}

// writeMessage answers with one assistant message: the step's tool call
// (stop_reason tool_use) or its text (end_turn), streamed as the real API
// streams it when the request asked for a stream.
func writeMessage(w http.ResponseWriter, req messagesRequest, s step, msgID, toolID string) {
	model := req.Model
	if model == "" {
		model = "claude-stand-in"
	}
	stop := "end_turn"
	var content map[string]any
	var delta map[string]any
	if toolID != "" {
		stop = "tool_use"
		input, _ := json.Marshal(s.Input)
		content = map[string]any{"type": "tool_use", "id": toolID, "name": s.Tool, "input": s.Input}
		delta = map[string]any{"type": "input_json_delta", "partial_json": string(input)}
	} else {
		content = map[string]any{"type": "text", "text": s.Text}
		delta = map[string]any{"type": "text_delta", "text": s.Text}
	}
	usage := map[string]any{"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !req.Stream {
		writeJSON(w, http.StatusOK, map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": []any{content}, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	event := func(name string, data map[string]any) {
		data["type"] = name
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	event("message_start", map[string]any{"message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage,
	}})
	start := map[string]any{}
	for k, v := range content {
		start[k] = v
	}
	if toolID != "" {
		start["input"] = map[string]any{}
	} else {
		start["text"] = ""
	}
	event("content_block_start", map[string]any{"index": 0, "content_block": start})
	event("content_block_delta", map[string]any{"index": 0, "delta": delta})
	event("content_block_stop", map[string]any{"index": 0})
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 20}})
	event("message_stop", map[string]any{})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func apiError(kind, msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": kind, "message": msg}}
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

var exitLine = regexp.MustCompile(`^Exit code (\d+)`)

// ExitCode is the exit code of a Bash call as the CLI told the model: 0
// for a result that is no error, N for one that starts "Exit code N", -1
// for any other error (a denial, a tool failure).
func (r toolResult) ExitCode() int {
	if !r.IsError {
		return 0
	}
	if m := exitLine.FindStringSubmatch(r.Content); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return -1
}
