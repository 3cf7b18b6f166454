package main

// Measurements of pickup's hooks as Claude Code, Codex CLI and Gemini CLI
// run them: a
// process per event, the event's JSON on stdin, the board found from the
// JSON's cwd. `scripts/bench -only hooks`.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/benchkit"
	"github.com/pickup-dev/pickup/sessions"
)

func init() {
	measurements = append(measurements, measurement{"hooks", hookProcesses})
}

// hookTrials is how many times each hook runs: the 30, fewer with
// -quick.
func (e *env) hookTrials() int { return min(e.trials, 30) }

// hookEnd8Limit is the target for SessionEnd giving back 8 claims in
// commit mode.
const hookEnd8Limit = 300 * time.Millisecond

// hookProcesses times each hook, e.hookTrials() runs, interleaved with the
// same number of runs of an empty Go program, whose median is the floor
// (target: each hook's median <= 2x the floor); then SessionEnd releasing 8
// claims in commit mode (one git commit), whose median is compared with
// hookEnd8Limit. fsync is on, as Claude Code runs the hooks.
func hookProcesses(e *env) (Row, error) {
	n := e.hookTrials()
	row := Row{
		What:   fmt.Sprintf("pickup hook EVENT as a process, %d runs each, fsync on, interleaved with an empty Go program; then session-end giving back 8 claims in commit mode", n),
		Target: fmt.Sprintf("each median <= 2x the Go floor's; session-end 8 claims commit mode median <= %s", ms(hookEnd8Limit)),
	}
	if e.goFloor == "" {
		return row, fmt.Errorf("-go-floor is needed: the target is a ratio to an empty Go program")
	}
	repo := e.dir("hooks")
	defer e.remove(repo)
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		return row, err
	}
	b, err := benchkit.NewBoard(filepath.Join(repo, ".spx", "sessions"))
	if err != nil {
		return row, err
	}
	for i := range 20 {
		if _, err := b.Create(sessions.Meta{Title: fmt.Sprintf("waiting %d", i)}, nil); err != nil {
			return row, err
		}
	}
	const owner = "5c3e2a9b-1f4d-4e8a-9b2c-7d6e5f4a3b2c"
	input := func(event string, extra string) (string, error) {
		path := filepath.Join(repo, event+".json")
		data := fmt.Sprintf(`{"session_id":%q,"transcript_path":"/x.jsonl","cwd":%q,"permission_mode":"default","hook_event_name":%q%s}`, owner, repo, event, extra)
		return path, os.WriteFile(path, []byte(data), 0o644)
	}
	type hook struct{ name, event, arg, extra, agent string }
	hooks := []hook{
		{"session-start", "SessionStart", "session-start", `,"source":"startup"`, ""},
		{"pre-tool-use Bash", "PreToolUse", "pre-tool-use", `,"tool_name":"Bash","tool_input":{"command":"pickup done 2026-11-22_09-15-03","description":"finish"}`, ""},
		{"pre-tool-use Edit (denied)", "PreToolUse", "pre-tool-use", fmt.Sprintf(`,"tool_name":"Edit","tool_input":{"file_path":%q,"old_string":"a","new_string":"b"}`, b.Path(sessions.Todo, "", benchkit.ID(0))), ""},
		{"pre-tool-use Edit (allowed)", "PreToolUse", "pre-tool-use", fmt.Sprintf(`,"tool_name":"Edit","tool_input":{"file_path":%q,"old_string":"a","new_string":"b"}`, filepath.Join(repo, "main.go")), ""},
		{"post-tool-use, throttled", "PostToolUse", "post-tool-use", `,"tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_response":{"stdout":"ok"}`, ""},
		{"session-end, nothing held", "SessionEnd", "session-end", `,"reason":"prompt_input_exit"`, ""},
		// Codex CLI's and Gemini CLI's hooks (pickup init --codex,
		// --gemini): the same code, their inputs and output forms.
		{"codex session-start", "SessionStart", "session-start", `,"model":"gpt-5","source":"startup"`, "codex"},
		{"codex pre-tool-use apply_patch (denied)", "PreToolUse", "pre-tool-use", fmt.Sprintf(`,"tool_name":"Bash","tool_input":{"command":"apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: %s\n*** End Patch\nEOF\n"},"tool_use_id":"call_1"`, b.Path(sessions.Todo, "", benchkit.ID(0))), "codex"},
		{"codex post-tool-use, throttled", "PostToolUse", "post-tool-use", `,"tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_response":"ok"`, "codex"},
		{"codex stop, auto_next off", "Stop", "stop", `,"stop_hook_active":false,"last_assistant_message":"done"`, "codex"},
		{"codex session-end, nothing held", "SessionEnd", "session-end", `,"reason":"other"`, "codex"},
		{"gemini session-start", "SessionStart", "session-start", `,"source":"startup"`, "gemini"},
		{"gemini before-tool write_file (denied)", "BeforeTool", "pre-tool-use", fmt.Sprintf(`,"tool_name":"write_file","tool_input":{"file_path":%q,"content":"x"}`, b.Path(sessions.Todo, "", benchkit.ID(0))), "gemini"},
		{"gemini after-tool, throttled", "AfterTool", "post-tool-use", `,"tool_name":"run_shell_command","tool_input":{"command":"go test ./..."},"tool_response":{"llmContent":"ok"}`, "gemini"},
		{"gemini after-agent, auto_next off", "AfterAgent", "stop", `,"prompt":"go","prompt_response":"done","stop_hook_active":false`, "gemini"},
		{"gemini session-end, nothing held", "SessionEnd", "session-end", `,"reason":"exit"`, "gemini"},
	}
	// Each hook as its agent's settings run it: Claude Code's and Codex
	// CLI's session-end with --detach (their budgets are 1.5 s and 3 s).
	hookArgs := func(h hook) []string {
		args := []string{"hook"}
		if h.agent != "" {
			args = append(args, "--agent", h.agent)
		}
		if h.arg == "session-end" && h.agent != "gemini" {
			args = append(args, "--detach")
		}
		return append(args, h.arg)
	}
	// The second floor: this driver re-run to exit as soon as main starts,
	// the Go runtime plus the init of every package pickup links. What a
	// hook costs above it is the hook's own code path; the rest is
	// pickup's start-up.
	self, err := os.Executable()
	if err != nil {
		return row, err
	}
	linked := make([]time.Duration, 0, n*len(hooks))
	floor := make([]time.Duration, 0, n*len(hooks))
	medians := make([]time.Duration, len(hooks))
	var figs []string
	for k, h := range hooks {
		in, err := input(h.event+"-"+strings.ReplaceAll(h.name, " ", "_"), h.extra)
		if err != nil {
			return row, err
		}
		var walls, cpus []time.Duration
		for i := 0; i < n+3; i++ {
			r, err := runHook(e, in, nil, hookArgs(h)...)
			if err != nil {
				return row, err
			}
			f, err := runCmd(e, exec.Command(e.goFloor))
			if err != nil {
				return row, err
			}
			noop := exec.Command(self)
			noop.Env = append(os.Environ(), noopEnv+"=1")
			if e.linkFloor != "" {
				noop = exec.Command(e.linkFloor)
			}
			l, err := runCmd(e, noop)
			if err != nil {
				return row, err
			}
			if i >= 3 { // the first runs warm the binary and the page cache
				walls, cpus = append(walls, r.wall), append(cpus, r.cpu)
				floor, linked = append(floor, f.wall), append(linked, l.wall)
			}
		}
		figs = append(figs, h.name+" "+spread(walls, cpus)) // sorts walls
		medians[k] = percentile(walls, 0.5)
	}
	slices.Sort(floor)
	slices.Sort(linked)
	fmed, lmed := percentile(floor, 0.5), percentile(linked, 0.5)
	worst := 0.0
	var ratios []string
	for k, h := range hooks {
		ratio := float64(medians[k]) / float64(fmed)
		worst = max(worst, ratio)
		ratios = append(ratios, fmt.Sprintf("%s %.2fx (+%s over the linked floor)", h.name, ratio, ms(medians[k]-lmed)))
	}
	end, endCPU, err := hookEnd8(e, n/3)
	if err != nil {
		return row, err
	}
	endFig := spread(end, endCPU)
	row.Figure = fmt.Sprintf("empty Go program: median %s over %d runs; a binary linking pickup's packages, exiting in main: median %s; %s; ratio to the empty Go program: %s; session-end giving back 8 claims, commit mode, %d runs: %s",
		ms(fmed), len(floor), ms(lmed), strings.Join(figs, "; "), strings.Join(ratios, ", "), len(end), endFig)
	row.Result = passIf(worst <= 2 && percentile(end, 0.5) <= hookEnd8Limit)
	return row, nil
}

// runHook runs `pickup ARGS...` with stdin from the file in (an *os.File:
// no copying goroutine, as Claude Code's pipe would be) and extra
// environment.
func runHook(e *env, in string, extraEnv []string, args ...string) (procResult, error) {
	f, err := os.Open(in)
	if err != nil {
		return procResult{}, err
	}
	defer f.Close()
	cmd := exec.Command(e.bin, args...)
	cmd.Stdin = f
	if extraEnv != nil {
		cmd.Env = append(os.Environ(), extraEnv...)
	}
	return runCmd(e, cmd)
}

// hookEnd8 times `pickup --commit hook session-end` for an owner holding 8
// sessions in a git repository, runs times: before each run, untimed, the
// owner claims 8 sessions with the library and the board is committed.
func hookEnd8(e *env, runs int) (walls, cpus []time.Duration, err error) {
	runs = max(runs, 5)
	repo := e.dir("hook-end-commit")
	defer e.remove(repo)
	gitEnv := []string{"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.com", "GIT_COMMITTER_NAME=bench",
		"GIT_COMMITTER_EMAIL=bench@example.com", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull}
	git := func(args ...string) error {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = repo, append(os.Environ(), gitEnv...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		return nil, nil, err
	}
	if err := git("init", "-q", "-b", "main"); err != nil {
		return nil, nil, err
	}
	b, err := benchkit.NewBoard(filepath.Join(repo, ".spx", "sessions"))
	if err != nil {
		return nil, nil, err
	}
	for i := range 8 {
		if _, err := b.Create(sessions.Meta{Title: fmt.Sprintf("held %d", i)}, nil); err != nil {
			return nil, nil, err
		}
	}
	const owner = "0a1b2c3d-4e5f-4a6b-8c7d-9e8f7a6b5c4d"
	in := filepath.Join(e.root, "session-end-8.json")
	data := fmt.Sprintf(`{"session_id":%q,"transcript_path":"/x.jsonl","cwd":%q,"permission_mode":"default","hook_event_name":"SessionEnd","reason":"prompt_input_exit"}`, owner, repo)
	if err := os.WriteFile(in, []byte(data), 0o644); err != nil {
		return nil, nil, err
	}
	cl, err := claim.New(b, owner)
	if err != nil {
		return nil, nil, err
	}
	for i := 0; i < runs+1; i++ {
		for range 8 {
			if _, err := cl.Next(context.Background()); err != nil {
				return nil, nil, fmt.Errorf("claim: %w", err)
			}
		}
		if err := git("add", "-A"); err != nil {
			return nil, nil, err
		}
		if err := git("commit", "-q", "-m", "claim 8"); err != nil {
			return nil, nil, err
		}
		r, err := runHook(e, in, gitEnv, "--commit", "hook", "--detach", "session-end") // as installed: detached in commit mode
		if err != nil {
			return nil, nil, err
		}
		if held, _ := b.ListOwner(owner); len(held) != 0 {
			return nil, nil, fmt.Errorf("session-end left %d claims", len(held))
		}
		if i >= 1 { // the first warms git and the page cache
			walls, cpus = append(walls, r.wall), append(cpus, r.cpu)
		}
	}
	return walls, cpus, nil
}
