package claudee2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMeasureHookCost measures what pickup's Stop and PostToolUse hooks
// cost a Claude Code session that did not opt in to auto_next, in one
// run: as Claude Code times them (its --debug-file log, "finished with
// status 0 (N ms)"), beside a `cat` hook and an empty Go program installed
// as hooks of the same events, and as processes started directly (pickup
// hook stop / post-tool-use against the empty Go program, interleaved).
// It is a measurement, not a test: it runs only with
// PICKUP_E2E_MEASURE=1 and reports with t.Log.
func TestMeasureHookCost(t *testing.T) {
	if os.Getenv("PICKUP_E2E_MEASURE") != "1" {
		t.Skip("a measurement: set PICKUP_E2E_MEASURE=1 to run it")
	}
	claudeBinary(t)
	p := newProject(t, projectFiles)
	empty := emptyProgram(t)

	// The floors beside pickup's hooks, as Claude Code runs them.
	settings := filepath.Join(p.root, ".claude", "settings.local.json")
	var doc map[string]any
	data, err := os.ReadFile(settings)
	if err != nil || json.Unmarshal(data, &doc) != nil {
		t.Fatalf("read %s: %v", settings, err)
	}
	hooks := doc["hooks"].(map[string]any)
	for _, ev := range []string{"PostToolUse", "Stop"} {
		for _, cmd := range []string{"cat >/dev/null", empty} {
			g := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": cmd, "timeout": 10}}}
			if ev == "PostToolUse" {
				g["matcher"] = "*"
			}
			hooks[ev] = append(hooks[ev].([]any), g)
		}
	}
	out, _ := json.MarshalIndent(doc, "", "  ")
	if err := os.WriteFile(settings, out, 0o644); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(p.root, "NOTES.md")
	if err := os.WriteFile(notes, []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const turns = 20
	var steps []step
	for i := 0; i < turns; i++ {
		steps = append(steps, step{Tool: "Read", Input: map[string]any{"file_path": notes}}, step{Text: "Read it."})
	}
	debug := filepath.Join(t.TempDir(), "claude.log")
	api := newStubAPI(t, "measure", steps...)
	a := p.startClaude("measure", api, claudeOpts{args: []string{"--debug-file", debug}})
	for i := 0; i < turns; i++ {
		a.prompt("Read NOTES.md.")
	}
	a.end()
	log, err := os.ReadFile(debug)
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`Hooks: (\w+)(?::\S*)? \[(.*)\] finished with status \d+ \((\d+)ms\)`)
	times := map[string][]float64{}
	for _, m := range line.FindAllStringSubmatch(string(log), -1) {
		kind := "other"
		switch {
		case strings.Contains(m[2], "pickup hook"):
			kind = "pickup"
		case strings.HasPrefix(m[2], "cat"):
			kind = "cat"
		case m[2] == empty:
			kind = "empty Go program"
		}
		ms, _ := strconv.ParseFloat(m[3], 64)
		times[m[1]+" "+kind] = append(times[m[1]+" "+kind], ms)
	}
	for _, k := range slices.Sorted(mapKeys(times)) {
		t.Logf("as Claude Code times it: %-30s n=%-3d median %5.1f ms  (min %.0f, max %.0f)", k, len(times[k]), median(times[k]), slices.Min(times[k]), slices.Max(times[k]))
	}

	// The same hooks as processes, interleaved with the empty program.
	stopIn := fmt.Sprintf(`{"session_id":"measure-1","cwd":%q,"hook_event_name":"Stop","stop_hook_active":false}`, p.root)
	postIn := fmt.Sprintf(`{"session_id":"measure-1","cwd":%q,"hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{},"tool_response":{}}`, p.root)
	const n = 200
	proc := map[string][]float64{}
	for i := 0; i < n; i++ {
		proc["empty Go program"] = append(proc["empty Go program"], timeRun(t, p, "", empty))
		proc["pickup hook stop"] = append(proc["pickup hook stop"], timeRun(t, p, stopIn, pickupBinary(t), "hook", "stop"))
		proc["pickup hook post-tool-use"] = append(proc["pickup hook post-tool-use"], timeRun(t, p, postIn, pickupBinary(t), "hook", "post-tool-use"))
		proc["cat"] = append(proc["cat"], timeRun(t, p, postIn, "cat"))
	}
	floor := median(proc["empty Go program"])
	for _, k := range slices.Sorted(mapKeys(proc)) {
		t.Logf("as a process: %-28s n=%d median %5.2f ms = %.2f x the empty Go program", k, n, median(proc[k]), median(proc[k])/floor)
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func timeRun(t *testing.T, p *project, stdin, name string, args ...string) float64 {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = p.root, p.env
	cmd.Stdin = strings.NewReader(stdin)
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return float64(time.Since(start).Microseconds()) / 1000
}

// emptyProgram builds a Go program that does nothing: the floor of any Go
// hook's start.
func emptyProgram(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module empty\n\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "empty")
	cmd := exec.Command("go", "build", "-o", exe, ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build the empty program: %v\n%s", err, out)
	}
	return exe
}
