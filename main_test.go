package main

import (
	"errors"
	"fmt"
	"github.com/pickup-dev/pickup/internal/roles"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/pickup-dev/pickup/internal/cli"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary act as the pickup command: testscript
// installs it in $PATH under that name, and scripts run it with
// `exec pickup ...`.
func TestMain(m *testing.M) {
	if code, ok := roles.Run(os.Args); ok { // see main.go
		os.Exit(code)
	}
	testscript.Main(m, map[string]func(){
		"pickup": func() { os.Exit(cli.Main(cli.OSEnv(), os.Args)) },
	})
}

// TestScript runs the end-to-end scripts in testdata/script: one
// <command>_<topic>.txtar per behaviour of the pickup CLI.
//
// Every script starts from the same environment: no board directory
// ($PICKUP_DIR unset), no owner variables, durable writes ($PICKUP_NO_SYNC
// unset), USER=tester, HOME=/no-home, and a git configuration that ignores
// the machine's. Scripts choose the board
// with --dir or $PICKUP_DIR themselves.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			// testscript starts from a clean environment (only PATH, HOME=/no-home,
			// TMPDIR and its own variables); make the variables pickup reads
			// explicit so that nothing from the outer environment can leak in.
			for _, v := range []string{"PICKUP_DIR", "PICKUP_OWNER", "CLAUDE_SESSION_ID", "CLAUDE_CODE_SESSION_ID", "CLAUDE_ENV_FILE", "CODEX_THREAD_ID", "PICKUP_NO_SYNC", "PICKUP_PID", "LOGNAME"} {
				env.Setenv(v, "")
			}
			env.Setenv("USER", "tester")
			// Under -race every pickup run would sleep a second at exit.
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			// git, for board_git: no system or global configuration, a fixed author.
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
			for _, v := range []string{"GIT_AUTHOR", "GIT_COMMITTER"} {
				env.Setenv(v+"_NAME", "Tester")
				env.Setenv(v+"_EMAIL", "tester@example.com")
				env.Setenv(v+"_DATE", "2026-11-22T09:00:00Z")
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":      cmdExits,
			"capture":    cmdCapture,
			"countfiles": cmdCountfiles,
			"mkfifo":     cmdMkfifo,
		},
	})
}

// exits N PROGRAM [ARGS...]: run PROGRAM like exec and require exit
// status N (`! exec` only says "not 0"). stdout and stderr are then checked
// with the stdout and stderr commands as usual.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// capture NAME: set $NAME to the standard output of the last command,
// without its trailing newline (for ids printed by pickup new).
func cmdCapture(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: capture NAME")
	}
	ts.Setenv(args[0], strings.TrimRight(ts.ReadFile("stdout"), "\n"))
}

// countfiles DIR N: DIR holds exactly N entries (files of any kind and
// directories, dotfiles included). With !, it holds any other number.
func cmdCountfiles(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: countfiles DIR N")
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	entries, err := os.ReadDir(ts.MkAbs(args[0]))
	ts.Check(err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	got := len(entries)
	if (got == want) == neg {
		ts.Fatalf("%s holds %d entries, want %s%d: %s", args[0], got, map[bool]string{true: "not ", false: ""}[neg], want, strings.Join(names, " "))
	}
}

// mkfifo PATH: create a named pipe.
func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mkfifo PATH")
	}
	path := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(filepath.Dir(path), 0o777))
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		ts.Fatalf("%v", fmt.Errorf("mkfifo: %w", err))
	}
}
