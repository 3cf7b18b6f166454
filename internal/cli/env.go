// Package cli implements the pickup command line: flag handling, output,
// the exit-code table and every command. main.go only calls Main.
package cli

import (
	"io"
	"os"
	"time"

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
	// InForeground reports whether this process's group is the foreground
	// group of its controlling terminal. A Ctrl-C there reaches every
	// process of the group, the commands pickup started included, so
	// pickup must not forward it a second time. Nil means no terminal.
	InForeground func() bool
}

// OSEnv returns the environment of the running process.
func OSEnv() *Env {
	return &Env{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Getenv: os.Getenv, Getwd: os.Getwd, Hostname: os.Hostname, Now: time.Now,
		StdoutIsTerminal: isTerminal(os.Stdout),
		InForeground:     inForeground,
	}
}

func inForeground() bool {
	// O_NOCTTY: looking must never make /dev/tty this process's terminal.
	fd, err := unix.Open("/dev/tty", unix.O_RDONLY|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false // no controlling terminal
	}
	defer unix.Close(fd)
	pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	return err == nil
}
