package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// reorderTestRun returns a run whose app can be built without touching the
// real environment.
func reorderTestRun() *run {
	return &run{env: &Env{
		Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard,
		Getenv:   func(string) string { return "" },
		Getwd:    func() (string, error) { return "/nonexistent", nil },
		Hostname: func() (string, error) { return "host", nil },
	}}
}

func TestReorderArgs(t *testing.T) {
	tests := []struct {
		name string
		args string
		want string
	}{
		{name: "flag after the id", args: "pickup claim X --json", want: "pickup claim --json X"},
		{name: "flag already first", args: "pickup claim --json X", want: "pickup claim --json X"},
		{name: "global flag before the command", args: "pickup --json next", want: "pickup --json next"},
		{name: "global flags on both sides", args: "pickup --json claim X --owner bob", want: "pickup --json claim --owner bob X"},
		{name: "global value flag before the command", args: "pickup --dir /b claim X", want: "pickup --dir /b claim X"},
		{name: "global value flag whose value is a command name", args: "pickup --owner done claim X", want: "pickup --owner done claim X"},
		{name: "value flag moves with its value", args: "pickup new body.md --title T", want: "pickup new --title T body.md"},
		{name: "alias moves with its value", args: "pickup new body.md -t T -p high", want: "pickup new -t T -p high body.md"},
		{name: "value given with =", args: "pickup new body.md --title=T", want: "pickup new --title=T body.md"},
		{name: "value that looks like a flag", args: "pickup new body.md --title --json", want: "pickup new --title --json body.md"},
		{name: "value that looks like a file", args: "pickup new --tag a body.md --tag b", want: "pickup new --tag a --tag b body.md"},
		{name: "global value flag after the command", args: "pickup claim X --dir /b --json", want: "pickup claim --dir /b --json X"},
		{name: "bool flag does not take the next word", args: "pickup claim --json X", want: "pickup claim --json X"},
		{name: "int flag takes its value", args: "pickup demo --agents 8 --keep", want: "pickup demo --agents 8 --keep"},
		{name: "stdin stays positional", args: "pickup new - --title T", want: "pickup new --title T -"},
		{name: "everything after -- untouched", args: "pickup claim X --json -- --owner -y", want: "pickup claim --json X -- --owner -y"},
		{name: "-- first", args: "pickup claim -- --json", want: "pickup claim -- --json"},
		{name: "-- before the command", args: "pickup -- claim X --json", want: "pickup -- claim X --json"},
		{name: "unknown command left alone", args: "pickup frobnicate X --json", want: "pickup frobnicate X --json"},
		{name: "unknown command after a global flag", args: "pickup --json frobnicate X --dir d", want: "pickup --json frobnicate X --dir d"},
		// A value flag without its value must not swallow the positional
		// argument in front of it: the parser should report it instead.
		{name: "flag value missing at the end", args: "pickup new body.md --title", want: "pickup new body.md --title"},
		{name: "global flag value missing at the end", args: "pickup claim X --owner", want: "pickup claim X --owner"},
		{name: "program name only", args: "pickup", want: "pickup"},
		{name: "help command", args: "pickup help claim", want: "pickup help claim"},
	}
	app := reorderTestRun().app(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := strings.Fields(tt.args)
			orig := slices.Clone(args)
			got := reorderArgs(app, args)
			if want := strings.Fields(tt.want); !slices.Equal(got, want) {
				t.Errorf("reorderArgs(%q) = %q, want %q", tt.args, got, want)
			}
			if !slices.Equal(args, orig) {
				t.Errorf("reorderArgs changed its argument slice to %q", args)
			}
		})
	}
}

// TestReorderArgsKeepsEveryArgument checks that reordering only permutes:
// no argument is lost or duplicated, whatever the input.
func TestReorderArgsKeepsEveryArgument(t *testing.T) {
	words := []string{"claim", "new", "list", "X", "-", "--", "--json", "--title", "T", "-t", "--dir", "--tag=a", "next"}
	app := reorderTestRun().app(nil)
	for _, a := range words {
		for _, b := range words {
			for _, c := range words {
				args := []string{"pickup", a, b, c, "end"}
				got := reorderArgs(app, args)
				if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(args))) {
					t.Fatalf("reorderArgs(%q) = %q: not a permutation", args, got)
				}
				if got[0] != "pickup" {
					t.Fatalf("reorderArgs(%q) moved the program name: %q", args, got)
				}
			}
		}
	}
}

func TestExitCode(t *testing.T) {
	sentinels := []struct {
		name string
		err  error
		want int
	}{
		{name: "ErrSessionNotAvailable", err: claim.ErrSessionNotAvailable, want: ExitNotAvailable},
		{name: "ErrNothingAvailable", err: claim.ErrNothingAvailable, want: ExitNotAvailable},
		{name: "ErrSessionNotFound", err: claim.ErrSessionNotFound, want: ExitNotFound},
		{name: "ErrConflict", err: claim.ErrConflict, want: ExitConflict},
		{name: "ErrClaimLost", err: claim.ErrClaimLost, want: ExitClaimLost},
		{name: "ErrCrossDevice", err: claim.ErrCrossDevice, want: ExitError},
		{name: "sessions.ErrInvalidID", err: sessions.ErrInvalidID, want: ExitUsage},
		{name: "claim.ErrInvalidID", err: claim.ErrInvalidID, want: ExitUsage},
		{name: "ErrNoBoard", err: sessions.ErrNoBoard, want: ExitUsage},
		{name: "usage", err: usageError("bad flag %q", "--x"), want: ExitUsage},
		{name: "random error", err: errors.New("disk on fire"), want: ExitError},
		{name: "os error", err: os.ErrPermission, want: ExitError},
	}
	type testCase struct {
		name string
		err  error
		want int
	}
	var tests []testCase
	for _, s := range sentinels {
		tests = append(tests,
			testCase{name: s.name, err: s.err, want: s.want},
			testCase{name: s.name + " wrapped in claim.Error", err: &claim.Error{Op: "claim", ID: "2026-01-01_00-00-00", Err: s.err}, want: s.want},
			testCase{name: s.name + " wrapped twice", err: fmt.Errorf("outer: %w", &claim.Error{Op: "done", ID: "x", State: sessions.Done, Err: s.err}), want: s.want},
		)
	}
	tests = append(tests,
		testCase{name: "nil", err: nil, want: ExitOK},
		testCase{name: "exit error", err: exitError{code: ExitLockTimeout, err: errors.New("lock")}, want: ExitLockTimeout},
		testCase{name: "exit error wrapping a sentinel", err: exitError{code: ExitError, err: claim.ErrConflict}, want: ExitError},
		testCase{name: "wrapped exit error", err: fmt.Errorf("x: %w", exitError{code: 5, err: errors.New("y")}), want: 5},
		testCase{name: "usage wrapping a sentinel", err: fmt.Errorf("%w: %w", errUsage, claim.ErrConflict), want: ExitUsage},
		testCase{name: "claim.Error with a usage error", err: &claim.Error{Op: "claim", Err: usageError("x")}, want: ExitUsage},
	)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExitCode(tt.err); got != tt.want {
				t.Errorf("ExitCode(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}
