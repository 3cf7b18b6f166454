package cli_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/cli"
	"github.com/pickup-dev/pickup/internal/lifeline"
	"github.com/pickup-dev/pickup/sessions"
)

// wkMain runs the pickup CLI in this process and returns its exit code and
// output. Its commands have no watchdog (it would cost a start of this
// race-instrumented binary per command, as their gate).
func wkMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return wkMainWatched(t, false, args...)
}

// wkMainWatched is wkMain, with a watchdog for the commands if watched:
// this test binary, which serves as one (and as the commands' gates) when
// run with the hidden argument.
func wkMainWatched(t *testing.T, watched bool, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	wd := t.TempDir()
	env := &cli.Env{
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut,
		Getenv:   func(string) string { return "" },
		Getwd:    func() (string, error) { return wd, nil },
		Hostname: os.Hostname,
		Now:      time.Now,
	}
	if watched {
		env.Lifeline = func() (*lifeline.Lifeline, error) { return lifeline.Start(os.Args[0], os.Stderr) }
	}
	code = cli.Main(env, append([]string{"pickup"}, args...))
	return code, out.String(), errOut.String()
}

// TestWorkCLI runs `pickup work -j 4 --max-attempts 2 --json -- sh -c ...`
// over 30 sessions: ten commands always fail, ten fail until the session's
// file counts an attempt, ten succeed. The stream, the summary, the exit
// code and the board are as predicted; list shows the set-aside sessions
// and requeue puts one back with its attempts reset.
func TestWorkCLI(t *testing.T) {
	b, err := sessions.Init(filepath.Join(t.TempDir(), "board"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := []string{"fail", "once", "ok"}
	var ids []string
	for _, k := range kinds {
		for i := 0; i < 10; i++ {
			id := fmt.Sprintf("%s-%02d", k, i)
			ids = append(ids, id)
			content := sessions.Render(sessions.Meta{Title: "session " + id, CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, []byte("# "+id+"\n"))
			if err := os.WriteFile(b.Path(sessions.Todo, "", id), content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// {} is the claimed session's path; the command sees its own
	// environment too.
	script := `test "$1" = "$PICKUP_SESSION_PATH" && test -f "$1" || exit 9
case "$PICKUP_SESSION_ID" in
fail-*) exit 1;;
once-*) grep -q '^attempts: 1$' "$1" || exit 2;;
esac`
	code, stdout, stderr := wkMain(t, "--dir", b.Dir, "--owner", "runner", "--no-sync", "--json",
		"work", "-j", "4", "--max-attempts", "2", "--", "sh", "-c", script, "sh", "{}")
	if code != cli.ExitError {
		t.Errorf("pickup work exit code %d, want %d (runs failed)\nstderr:\n%s", code, cli.ExitError, stderr)
	}

	// One JSON object per line; the last is the summary.
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	counts := map[string]int{}
	byID := map[string][]string{}
	for i, line := range lines[:len(lines)-1] {
		var ev claim.WorkEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("stdout line %d %q: %v", i+1, line, err)
		}
		counts[ev.Event]++
		byID[ev.ID] = append(byID[ev.ID], fmt.Sprintf("%s/%d", ev.Event, ev.Attempt))
	}
	var last struct {
		Event   string            `json:"event"`
		Summary claim.WorkSummary `json:"summary"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Event != "summary" {
		t.Fatalf("last line %q is not the summary: %v", lines[len(lines)-1], err)
	}
	want := claim.WorkSummary{Claimed: 50, Done: 20, Failed: 30, SetAside: 10}
	if last.Summary != want {
		t.Errorf("summary %+v, want %+v", last.Summary, want)
	}
	if want := map[string]int{"claimed": 50, "done": 20, "failed": 20, "set_aside": 10}; fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("events %v, want %v", counts, want)
	}
	wantEvents := map[string][]string{
		"fail": {"claimed/1", "failed/1", "claimed/2", "set_aside/2"},
		"once": {"claimed/1", "failed/1", "claimed/2", "done/2"},
		"ok":   {"claimed/1", "done/1"},
	}
	for _, id := range ids {
		if w := wantEvents[strings.Split(id, "-")[0]]; !slices.Equal(byID[id], w) {
			t.Errorf("%s: events %v, want %v in this order (a failure must be reported before the session is claimed again)", id, byID[id], w)
		}
	}

	// list shows every session where it ended, set-aside ones as failed.
	code, stdout, stderr = wkMain(t, "--dir", b.Dir, "list", "--json")
	if code != 0 {
		t.Fatalf("pickup list: exit %d: %s", code, stderr)
	}
	var list []struct {
		ID       string `json:"id"`
		State    string `json:"state"`
		Attempts int    `json:"attempts"`
	}
	if err := json.Unmarshal([]byte(stdout), &list); err != nil {
		t.Fatalf("list --json: %v\n%s", err, stdout)
	}
	got := map[string]string{}
	for _, s := range list {
		got[s.ID] = fmt.Sprintf("%s/%d", s.State, s.Attempts)
	}
	wantList := map[string]string{}
	for _, id := range ids {
		wantList[id] = map[string]string{"fail": "failed/2", "once": "done/1", "ok": "done/0"}[strings.Split(id, "-")[0]]
	}
	if fmt.Sprint(got) != fmt.Sprint(wantList) {
		t.Errorf("list: %v\nwant %v", got, wantList)
	}

	// requeue undoes the setting aside.
	if code, _, stderr := wkMain(t, "--dir", b.Dir, "--owner", "someone", "requeue", "fail-03"); code != 0 {
		t.Fatalf("pickup requeue: exit %d: %s", code, stderr)
	}
	code, stdout, stderr = wkMain(t, "--dir", b.Dir, "list", "--json", "--state", "todo")
	if code != 0 {
		t.Fatalf("pickup list: exit %d: %s", code, stderr)
	}
	list = nil
	if err := json.Unmarshal([]byte(stdout), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != "fail-03" || list[0].State != "todo" || list[0].Attempts != 0 {
		t.Errorf("todo after requeue: %+v, want fail-03 alone with attempts 0", list)
	}
	if code, _, _ := wkMain(t, "--dir", b.Dir, "--owner", "someone", "requeue", "fail-03"); code != cli.ExitNotAvailable {
		t.Errorf("requeue of a session in todo: exit %d, want %d", code, cli.ExitNotAvailable)
	}
}

// TestWorkCLIWaitDeadline: `work --wait=DUR` serves new sessions for DUR;
// a command still running at the deadline is let finish (it is not
// signalled and its session not released), as after a bare `work` that
// finds nothing more to claim.
func TestWorkCLIWaitDeadline(t *testing.T) {
	b, err := sessions.Init(filepath.Join(t.TempDir(), "board"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b.Path(sessions.Todo, "", "long"), sessions.Render(sessions.Meta{Title: "long"}, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	// The command outlives the deadline by a second and then succeeds.
	code, stdout, stderr := wkMain(t, "--dir", b.Dir, "--owner", "runner", "--no-sync", "--json",
		"work", "-j", "1", "--wait=1s", "--", "sh", "-c", "sleep 2")
	if code != 0 {
		t.Errorf("pickup work --wait=1s: exit code %d, want 0\nstderr:\n%s", code, stderr)
	}
	var events []string
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var ev claim.WorkEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("stdout line %q: %v", line, err)
		}
		events = append(events, ev.Event)
	}
	if want := []string{"claimed", "done", "summary"}; !slices.Equal(events, want) {
		t.Errorf("events %v, want %v\nstdout:\n%s", events, want, stdout)
	}
	if _, err := os.Stat(b.Path(sessions.Done, "", "long")); err != nil {
		t.Errorf("the session is not done: %v", err)
	}
}

// TestWorkCLICommandName: a command named without a slash is looked up in
// $PATH (once, not per session) and still gets its name as the user wrote
// it as its argv[0], through the gate that holds it until the watchdog
// lists it too; one that is not there stops work before it claims anything
// (exit 2): the sessions stay in todo/, nothing is counted or set aside.
func TestWorkCLICommandName(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc/self/cmdline")
	}
	b, err := sessions.Init(filepath.Join(t.TempDir(), "board"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if err := os.WriteFile(b.Path(sessions.Todo, "", id), sessions.Render(sessions.Meta{Title: id}, nil), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The shell writes the first word of its own command line next to
	// the board.
	script := `tr '\0' '\n' < /proc/$$/cmdline | head -n 1 > "$PICKUP_DIR/argv0.$PICKUP_SESSION_ID"`
	code, _, stderr := wkMainWatched(t, true, "--dir", b.Dir, "--owner", "runner", "--no-sync",
		"work", "-j", "2", "--", "sh", "-c", script)
	if code != 0 {
		t.Fatalf("pickup work: exit code %d\nstderr:\n%s", code, stderr)
	}
	for _, id := range []string{"a", "b", "c"} {
		data, err := os.ReadFile(filepath.Join(b.Dir, "argv0."+id))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(data)); got != "sh" {
			t.Errorf("session %s: the command's argv[0] is %q, want %q", id, got, "sh")
		}
	}

	if err := os.WriteFile(b.Path(sessions.Todo, "", "d"), sessions.Render(sessions.Meta{Title: "d"}, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = wkMainWatched(t, true, "--dir", b.Dir, "--owner", "runner", "--no-sync",
		"work", "--max-attempts", "1", "--", "pickup-no-such-command")
	if code != cli.ExitUsage || !strings.Contains(stderr, "executable file not found") {
		t.Errorf("a command not in $PATH: exit code %d, want %d, and the lookup's error\nstderr:\n%s", code, cli.ExitUsage, stderr)
	}
	if _, err := os.Stat(b.Path(sessions.Todo, "", "d")); err != nil {
		t.Errorf("the session is not in todo/ any more: %v", err)
	}
}

// TestWorkWithoutWatchdog: if the watchdog that kills the commands when
// pickup dies cannot start, work says so and runs the commands anyway.
func TestWorkWithoutWatchdog(t *testing.T) {
	b, err := sessions.Init(filepath.Join(t.TempDir(), "board"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b.Path(sessions.Todo, "", "one"), sessions.Render(sessions.Meta{Title: "one"}, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	env := &cli.Env{
		Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr,
		Getenv:   func(string) string { return "" },
		Getwd:    os.Getwd,
		Hostname: os.Hostname,
		Now:      time.Now,
		Lifeline: func() (*lifeline.Lifeline, error) { return nil, errors.New("start watchdog: no such thing here") },
	}
	code := cli.Main(env, []string{"pickup", "--dir", b.Dir, "--owner", "runner", "--no-sync", "work", "--", "true"})
	if code != 0 {
		t.Fatalf("work exited %d\nstderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "pickup: work: start watchdog: no such thing here; running commands without it: if pickup is killed with SIGKILL, what they started may keep running") {
		t.Errorf("work does not say that it runs without a watchdog:\n%s", stderr.String())
	}
	if _, err := os.Stat(b.Path(sessions.Done, "", "one")); err != nil {
		t.Errorf("the session was not done: %v", err)
	}
}
