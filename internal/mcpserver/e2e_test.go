package mcpserver_test

// These tests drive the real server the way agents do: the MCP Go SDK's own
// client starts `pickup mcp` (the real pickup binary, which hands over to
// the real pickup-mcp) over stdio, in a scratch repository.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var binDir string

func TestMain(m *testing.M) {
	if os.Getenv(agentEnv) != "" {
		os.Exit(agentMain())
	}
	d, err := os.MkdirTemp("", "pickup-mcp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = d
	code := func() int {
		for _, p := range []struct{ name, pkg string }{
			{"pickup", "github.com/pickup-dev/pickup"},
			{"pickup-mcp", "github.com/pickup-dev/pickup/internal/cmd/pickup-mcp"},
		} {
			if out, err := exec.Command(goBin(), "build", "-tags", "urfave_cli_no_docs", "-o", filepath.Join(d, p.name), p.pkg).CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", p.pkg, err, out)
				return 1
			}
		}
		return m.Run()
	}()
	os.RemoveAll(d)
	os.Exit(code)
}

func goBin() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// env is the environment of every process a test starts: the built
// binaries first on PATH, no owner or board from the test's own
// environment.
func env(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "PATH", strings.HasPrefix(k, "PICKUP_"), strings.HasPrefix(k, "CLAUDE"), k == "CODEX_THREAD_ID":
			continue
		}
		out = append(out, kv)
	}
	return append(append(out, "PATH="+binDir+":"+os.Getenv("PATH")), extra...)
}

// repo makes a git repository with a board holding sessions titled by
// titles, in order of priority (all medium, oldest first).
func repo(t *testing.T, titles ...string) string {
	t.Helper()
	dir := t.TempDir()
	run(t, dir, "git", "init", "-q")
	pickup(t, dir, "init")
	for _, title := range titles {
		pickup(t, dir, "new", "--title", title)
	}
	return dir
}

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env("PICKUP_OWNER=tester"), nil
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func pickup(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return run(t, dir, filepath.Join(binDir, "pickup"), args...)
}

// connect starts `pickup mcp` in dir for a client named name.
func connect(t *testing.T, dir, name string, extraEnv ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "pickup"), "mcp")
	cmd.Dir, cmd.Env, cmd.Stderr = dir, env(extraEnv...), os.Stderr
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
	// Close waits this long for the server's exit before it signals:
	// room for a slow machine, never reached by a server that works.
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Minute}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// answer is what a tool call returned: its text and structured content.
type answer struct {
	text    string
	isError bool
	Outcome string `json:"outcome"`
	ID      string `json:"id"`
	State   string `json:"state"`
	Owner   string `json:"owner"`
	Title   string `json:"title"`
	File    string `json:"file"`
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) answer {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	var a answer
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			a.text += tc.Text
		}
	}
	a.isError = res.IsError
	if res.StructuredContent != nil {
		data, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(data, &a); err != nil {
			t.Fatalf("call %s: structured content %s: %v", tool, data, err)
		}
	}
	return a
}

// TestToolsListBudget: the whole tools/list costs at most 2,000 tokens
// (bytes / 4), and the tools are the commands'.
func TestToolsListBudget(t *testing.T) {
	cs := connect(t, repo(t), "budget")
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	sort.Strings(names)
	if got := strings.Join(names, " "); got != "claim done list new next release show" {
		t.Errorf("tools: %s", got)
	}
	t.Logf("tools/list: %d bytes, %d tokens (bytes/4)", len(data), len(data)/4)
	if len(data)/4 > 2000 {
		t.Errorf("tools/list is %d bytes, %d tokens: more than 2,000", len(data), len(data)/4)
	}
}

// TestSessionLife: next, show, done, list; nothing available and a lost
// race are answers, not errors; the owner is the connection's own, named
// after the client, and pickup status says so.
func TestSessionLife(t *testing.T) {
	dir := repo(t, "Fix the parser")
	a := connect(t, dir, "Agent One")
	b := connect(t, dir, "agent-two")

	got := call(t, a, "next", nil)
	if got.isError || got.Outcome != "claimed" || got.Title != "Fix the parser" || got.State != "doing" {
		t.Fatalf("next: %+v", got)
	}
	if !strings.HasPrefix(got.Owner, "agent-one-mcp-") || !strings.Contains(got.File, "/doing/"+got.Owner+"/") {
		t.Errorf("owner %q, file %q: want agent-one-mcp-… and the file in its doing/", got.Owner, got.File)
	}
	if st := pickup(t, dir, "status"); !strings.Contains(st, got.Owner+": alive") {
		t.Errorf("pickup status does not show %s alive:\n%s", got.Owner, st)
	}

	none := call(t, b, "next", nil)
	if none.isError || none.Outcome != "none" || !strings.Contains(none.text, "call next again later") {
		t.Errorf("next on an empty queue: %+v", none)
	}
	lost := call(t, b, "claim", map[string]any{"id": got.ID})
	if lost.isError || lost.Outcome != "lost" || lost.Owner != got.Owner || !strings.Contains(lost.text, "call next") {
		t.Errorf("claim of a session another holds: %+v", lost)
	}
	if lost := call(t, b, "done", map[string]any{"id": got.ID}); lost.isError || lost.Outcome != "lost" {
		t.Errorf("done of a session another holds: %+v", lost)
	}
	if bad := call(t, b, "show", map[string]any{"id": "no-such-id"}); !bad.isError || !strings.Contains(bad.text, "list") {
		t.Errorf("show of a missing session: %+v", bad)
	}
	if show := call(t, b, "show", map[string]any{"id": got.ID}); show.Owner != got.Owner || !strings.Contains(show.text, "title: Fix the parser") {
		t.Errorf("show: %+v", show)
	}

	if done := call(t, a, "done", map[string]any{"id": got.ID}); done.Outcome != "done" || done.State != "done" {
		t.Errorf("done: %+v", done)
	}
	made := call(t, b, "new", map[string]any{"title": "Write the docs", "priority": "high", "tags": []string{"docs"}, "after": []string{got.ID}})
	if made.Outcome != "created" || made.State != "todo" {
		t.Fatalf("new: %+v", made)
	}
	if list := call(t, b, "list", map[string]any{"state": "todo"}); !strings.Contains(list.text, made.ID+" [high] Write the docs") {
		t.Errorf("list: %+v", list)
	}
	if got := call(t, b, "next", map[string]any{"tags": []string{"other"}}); got.Outcome != "none" {
		t.Errorf("next with a tag nothing has: %+v", got)
	}
	if got := call(t, b, "next", map[string]any{"tags": []string{"docs"}}); got.Outcome != "claimed" || got.ID != made.ID {
		t.Errorf("next --tag docs: %+v", got)
	}
}

// TestOwnerOverride: $PICKUP_OWNER names the owner of every connection.
func TestOwnerOverride(t *testing.T) {
	dir := repo(t, "One")
	cs := connect(t, dir, "agent", "PICKUP_OWNER=ana")
	if got := call(t, cs, "next", nil); got.Owner != "ana" {
		t.Errorf("next with PICKUP_OWNER=ana: %+v", got)
	}
}

// TestThreeClientsDrainOnce: three agents, a server each, drain a board
// together; every session is claimed by exactly one and finished once.
func TestThreeClientsDrainOnce(t *testing.T) {
	const n = 30
	var titles []string
	for i := range n {
		titles = append(titles, fmt.Sprintf("session %02d", i))
	}
	dir := repo(t, titles...)
	var mu sync.Mutex
	byID := map[string][]string{}
	owners := map[string]bool{}
	var wg sync.WaitGroup
	for i := range 3 {
		cs := connect(t, dir, fmt.Sprintf("drainer %d", i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				got := call(t, cs, "next", nil)
				if got.Outcome == "none" {
					return
				}
				if got.Outcome != "claimed" {
					t.Errorf("next: %+v", got)
					return
				}
				mu.Lock()
				byID[got.ID] = append(byID[got.ID], got.Owner)
				owners[got.Owner] = true
				mu.Unlock()
				if done := call(t, cs, "done", map[string]any{"id": got.ID}); done.Outcome != "done" {
					t.Errorf("done %s: %+v", got.ID, done)
				}
			}
		}()
	}
	wg.Wait()
	if len(byID) != n {
		t.Errorf("%d sessions claimed, want %d", len(byID), n)
	}
	for id, who := range byID {
		if len(who) != 1 {
			t.Errorf("%s claimed by %v", id, who)
		}
	}
	if len(owners) < 2 {
		t.Logf("only %d owner(s) took work (a slow start of the others)", len(owners))
	}
	done, _ := filepath.Glob(filepath.Join(dir, ".spx/sessions/done/*.md"))
	if len(done) != n {
		t.Errorf("%d sessions in done/, want %d", len(done), n)
	}
}

// TestStdinClosedGivesBack: a client that closes the connection gives its
// claim back before the server exits, so the next next gets it, and its
// lease is gone.
func TestStdinClosedGivesBack(t *testing.T) {
	dir := repo(t, "Fix the parser")
	cs := connect(t, dir, "leaver")
	got := call(t, cs, "next", nil)
	if got.Outcome != "claimed" {
		t.Fatalf("next: %+v", got)
	}
	if err := cs.Close(); err != nil { // closes stdin, waits for the exit
		t.Fatalf("close: %v", err)
	}
	out := pickup(t, dir, "--owner", "bob", "next")
	if !strings.Contains(out, "claimed "+got.ID) {
		t.Errorf("after the client left, next: %s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, ".spx/sessions/.pickup/leases", got.Owner+".json")); !os.IsNotExist(err) {
		t.Errorf("the lease of %s is still there (%v)", got.Owner, err)
	}
}

// TestKilledAgentGivesBackAtOnce: an agent killed with SIGKILL while it
// holds a session. Its server is left running with its standard input
// open in another process (linger), or sees it close (no linger); either
// way the very next next of another owner gets the session, and the
// server, its client gone, exits by itself.
func TestKilledAgentGivesBackAtOnce(t *testing.T) {
	for _, linger := range []bool{true, false} {
		t.Run(fmt.Sprintf("linger=%v", linger), func(t *testing.T) {
			dir := repo(t, "Fix the parser")
			agent := exec.Command(os.Args[0], "-test.run=^$")
			agent.Dir = dir
			agent.Env = env(agentEnv+"=1", fmt.Sprintf("%s=%v", lingerEnv, linger))
			agent.Stderr = os.Stderr
			stdout, err := agent.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := agent.Start(); err != nil {
				t.Fatal(err)
			}
			var id string
			var server, sleeper int
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if _, serr := fmt.Sscan(line, &id, &server, &sleeper); err != nil || serr != nil {
				agent.Process.Kill()
				agent.Wait()
				t.Fatalf("agent said %q (%v, %v)", line, err, serr)
			}
			if sleeper > 0 {
				defer syscall.Kill(sleeper, syscall.SIGKILL)
			}
			if err := agent.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			agent.Wait()
			out := pickup(t, dir, "--owner", "bob", "next")
			if !strings.Contains(out, "claimed "+id) {
				t.Fatalf("right after the kill, next: %s\n%s", out, pickup(t, dir, "status"))
			}
			if log := pickup(t, dir, "log", id); !strings.Contains(log, "bob") {
				t.Errorf("log: %s", log)
			}
			// The server, its client gone, exits (its parent died).
			// Polled, not timed: the bound only catches a hang.
			for start := time.Now(); syscall.Kill(server, 0) == nil && !zombie(server); time.Sleep(20 * time.Millisecond) {
				if time.Since(start) > 2*time.Minute {
					t.Fatalf("server pid %d still runs two minutes after its agent died", server)
				}
			}
		})
	}
}

func zombie(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z'
	}
	return false
}

// TestSharedBoardWithoutItsArbiter: on a board shared through a git remote
// that cannot be reached (config.yaml says shared: origin, and the clone
// has no such remote), the server's transitions go through claim.New,
// which must open the remote's arbiter: next is a tool error that names
// the remote, nothing moves (no silent local claim), and list still
// answers.
func TestSharedBoardWithoutItsArbiter(t *testing.T) {
	dir := repo(t, "Fix the parser")
	cfg := filepath.Join(dir, ".spx/sessions/config.yaml")
	if err := os.WriteFile(cfg, []byte("shared: origin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, dir, "agent")
	got := call(t, cs, "next", nil)
	if !got.isError || !strings.Contains(got.text, "origin") {
		t.Errorf("next on a shared board without its remote: %+v, want a tool error naming origin", got)
	}
	if todo, _ := filepath.Glob(filepath.Join(dir, ".spx/sessions/todo/*.md")); len(todo) != 1 {
		t.Errorf("todo holds %d sessions after the refusal, want 1", len(todo))
	}
	if doing, _ := filepath.Glob(filepath.Join(dir, ".spx/sessions/doing/*/*.md")); len(doing) != 0 {
		t.Errorf("doing/ holds %v after the refusal, want nothing", doing)
	}
	if list := call(t, cs, "list", nil); list.isError || !strings.Contains(list.text, "Fix the parser") {
		t.Errorf("list on a shared board: %+v", list)
	}
}

// TestCloseDuringNext: a client that sends next and closes its input at
// once, without waiting for the answer. Whether the claim happened or not,
// once the server has exited nothing is left in doing/: a claim under way
// lands before the give-back.
func TestCloseDuringNext(t *testing.T) {
	dir := repo(t, "Fix the parser")
	for i := range 5 {
		in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hasty","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"next","arguments":{}}}
`
		cmd := exec.Command(filepath.Join(binDir, "pickup"), "mcp")
		cmd.Dir, cmd.Env, cmd.Stdin = dir, env(), strings.NewReader(in)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("pickup mcp: %v\n%s", err, out)
		}
		if held, _ := filepath.Glob(filepath.Join(dir, ".spx/sessions/doing/*/*.md")); len(held) != 0 {
			t.Fatalf("run %d: after the server exited, doing/ holds %v", i, held)
		}
	}
}
