// Package cli implements the pickup command line: flag handling, output,
// the exit-code table and every command. main.go only calls Main.
package cli

import (
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/pickup-dev/pickup/internal/lifeline"
	"golang.org/x/sys/unix"
)

// Env is everything a command touches outside the board: streams,
// environment, clock and host name. Tests replace any of it.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Getwd          func() (string, error)
	Hostname       func() (string, error)
	Now            func() time.Time
	// StdoutIsTerminal reports whether stdout is a terminal, in which case
	// control bytes in titles and bodies are escaped.
	StdoutIsTerminal bool
	// TTY opens the controlling terminal. When pickup's group is its
	// foreground group, lock run hands the terminal to its command's
	// process group while the command runs: in a background group, a
	// command that read the terminal would be stopped. Nil, or a nil
	// result: no terminal.
	TTY func() *os.File
	// Lifeline starts the watchdog that kills the commands of work and lock
	// run if pickup dies (internal/lifeline). Nil: no watchdog; the
	// commands still get process groups of their own and, on Linux,
	// PR_SET_PDEATHSIG (for tests that run Main inside their own process).
	Lifeline func() (*lifeline.Lifeline, error)
	// GitProxy is the program that git runs as core.gitProxy when pickup
	// fetches or pushes: this executable, which relays git:// connections
	// without git's 40 ms stalls (internal/gitx/proxy.go). Nil or "":
	// git connects by itself.
	GitProxy func() string
}

// OSEnv returns the environment of the running process.
func OSEnv() *Env {
	return &Env{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Getenv: os.Getenv, Getwd: os.Getwd, Hostname: os.Hostname, Now: time.Now,
		StdoutIsTerminal: isTerminal(os.Stdout),
		TTY:              controllingTTY,
		// The watchdog is this executable again, under the name pickup
		// was called by: ps shows it as "pickup __lifeline".
		Lifeline: func() (*lifeline.Lifeline, error) { return lifeline.Start(os.Args[0], os.Stderr) },
		GitProxy: selfPath,
	}
}

// selfPath is pickupCommand as an absolute path (git runs it from the top
// of the work tree), or "" if there is none.
func selfPath() string {
	exe, err := pickupCommand()
	if err != nil {
		return ""
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return ""
	}
	return exe
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	return err == nil
}
