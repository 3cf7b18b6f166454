package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pickup-dev/pickup/internal/cli"
	"github.com/pickup-dev/pickup/sessions"
)

// TestWorkCannotStart: with a watchdog (each command starts as a gate that
// execs it) or without (os/exec starts it directly), a command that cannot
// be started stops work with exit 2: every session back in todo/ exactly as
// it was, nothing in failed/, the reason and its fix on stderr. A command
// that runs and exits 126 itself is a failure like any other.
func TestWorkCannotStart(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "not-exec.sh")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\nexit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		argv    []string
		code    int
		stderr  string // in stderr
		counted bool   // the runs count as failed attempts
	}{
		{name: "not executable", argv: []string{notExec, "{}"}, code: cli.ExitUsage,
			stderr: "cannot start " + notExec + ": permission denied; stopped at once"},
		{name: "not there", argv: []string{filepath.Join(dir, "nope")}, code: cli.ExitUsage,
			stderr: "cannot start " + filepath.Join(dir, "nope") + ": no such file or directory; stopped at once"},
		{name: "not in PATH", argv: []string{"pickup-no-such-command"}, code: cli.ExitUsage,
			stderr: "cannot start pickup-no-such-command: executable file not found in $PATH; nothing was claimed"},
		{name: "exits 126 itself", argv: []string{"sh", "-c", "exit 126"}, code: cli.ExitError, counted: true},
	}
	for _, watched := range []bool{false, true} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s, watched %v", tt.name, watched), func(t *testing.T) {
				b, err := sessions.Init(filepath.Join(t.TempDir(), "board"))
				if err != nil {
					t.Fatal(err)
				}
				before := map[string]string{}
				for i := 0; i < 4; i++ {
					id := fmt.Sprintf("s%d", i)
					content := sessions.Render(sessions.Meta{Title: id}, nil)
					before[id] = string(content)
					if err := os.WriteFile(b.Path(sessions.Todo, "", id), content, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				args := append([]string{"--dir", b.Dir, "--owner", "runner", "--no-sync", "work", "-j", "2", "--max-attempts", "1", "--"}, tt.argv...)
				code, _, stderr := wkMainWatched(t, watched, args...)
				if code != tt.code || !strings.Contains(stderr, tt.stderr) {
					t.Fatalf("exit %d, want %d, with %q in stderr:\n%s", code, tt.code, tt.stderr, stderr)
				}
				failed, err := b.ListState(sessions.Failed, true)
				if err != nil {
					t.Fatal(err)
				}
				if tt.counted {
					if len(failed) != len(before) {
						t.Errorf("%d session(s) set aside, want all %d: the command ran and failed", len(failed), len(before))
					}
					return
				}
				if len(failed) > 0 {
					t.Errorf("%d session(s) set aside: a command that never ran counted against them", len(failed))
				}
				for id, want := range before {
					got, err := os.ReadFile(b.Path(sessions.Todo, "", id))
					if err != nil || string(got) != want {
						t.Errorf("%s is not back in todo/ as it was (%v):\n%s", id, err, got)
					}
				}
			})
		}
	}
}
