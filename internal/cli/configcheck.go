package cli

// Mistakes found before a command changes anything. A setting that is
// wrong (config.yaml, --commit outside a repository) used to surface only
// after the transition it concerned had happened: the command exited 1
// although it had taken effect, and a script that retried it made a
// duplicate. Now the whole config.yaml is checked when the board is
// opened, and commit mode is started before the first change: either
// fails with exit 2 and an unchanged board.

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/sessions"
)

// board opens the board and checks its config.yaml whole: a command that
// goes on has valid settings. Commands that must work on a board whose
// settings are wrong (doctor reports them, hooks must not block Claude
// Code) use openBoard.
func (r *run) board() (*sessions.Board, error) { return r.boardWith(sessions.Open) }

// boardWith is board, opening the board with open (see openBoard).
func (r *run) boardWith(open func(string) (*sessions.Board, error)) (*sessions.Board, error) {
	b, err := r.openBoard(open)
	if err != nil {
		return nil, err
	}
	cfg, err := b.Config()
	if err != nil {
		var ce *sessions.ConfigError
		if errors.As(err, &ce) {
			return nil, refuse(err, fmt.Sprintf("correct %s as the error says and run the command again", ce.Path))
		}
		return nil, err
	}
	r.commits.useConfig(cfg)
	r.shared.useConfig(cfg)
	if err := r.shared.beforeCommand(b, cfg); err != nil {
		// A command that only reads goes on with a warning; one that
		// changes the board stops in ready (its answer would rest on a
		// state the remote lacks).
		fmt.Fprintf(r.env.Stderr, "pickup: warning: %s\n", sanitize(err.Error()))
	}
	if cfg.LineupAge != 0 {
		b.LineupAge = cfg.LineupAge
	}
	return b, nil
}

// readyToChange is called before a command changes the board: commit mode,
// if it is on, must be able to commit (the board is in a git work tree).
// Read-only commands never call it, so they never run git.
func (r *run) readyToChange(b *sessions.Board) error {
	if err := r.commits.ready(b); err != nil {
		var cm *commitModeError
		if errors.As(err, &cm) {
			return refuse(err, cm.Hint())
		}
		return err
	}
	return r.shared.ready(b)
}

// changingBoard is board, then readyToChange: for commands that change the
// board without a claim client (new, reap, doctor --fix).
func (r *run) changingBoard() (*sessions.Board, error) { return r.changingBoardWith(sessions.Open) }

// changingBoardWith is changingBoard, opening the board with open.
func (r *run) changingBoardWith(open func(string) (*sessions.Board, error)) (*sessions.Board, error) {
	b, err := r.boardWith(open)
	if err != nil {
		return nil, err
	}
	if err := r.readyToChange(b); err != nil {
		return nil, err
	}
	return b, nil
}

// refuse reports a mistake found before the command changed anything:
// exit 2 (bad input), and a hint that says how to correct it and that
// nothing changed, so that the caller can run the command again without
// fear of doing anything twice.
func refuse(err error, hint string) error {
	return exitError{code: ExitUsage, err: &refusedError{err: err, hint: hint}}
}

// refusedError carries refuse's hint.
type refusedError struct {
	err  error
	hint string
}

func (e *refusedError) Error() string { return e.err.Error() }
func (e *refusedError) Unwrap() error { return e.err }
func (e *refusedError) Hint() string  { return e.hint + "; nothing was changed" }

// commitModeError: commit mode is on, but there is no repository to commit
// to (or git cannot run).
type commitModeError struct {
	source string // what turned it on, as the user wrote it
	fix    string // how to turn that off
	dir    string // the board
	err    error
}

func (e *commitModeError) Error() string {
	if errors.Is(e.err, gitx.ErrNotRepo) {
		return fmt.Sprintf("commit mode is on (%s), but the board %s is not in a git work tree: %v", e.source, e.dir, e.err)
	}
	return fmt.Sprintf("commit mode is on (%s), but git cannot be run for the board %s: %v", e.source, e.dir, e.err)
}

func (e *commitModeError) Unwrap() error { return e.err }

// Hint says how to turn commit mode off, or what to give it.
func (e *commitModeError) Hint() string {
	if errors.Is(e.err, gitx.ErrNotRepo) {
		return e.fix + ", or put the board in a git repository (git init)"
	}
	return e.fix + ", or make git runnable (is it installed and in $PATH?)"
}

// commitSource says what turned commit mode on, and how to turn it off:
// --commit, else $PICKUP_COMMIT, else config.yaml (with its line).
func commitSource(flag, envSet bool, b *sessions.Board, getenv func(string) string) (source, fix string) {
	switch {
	case flag:
		return "--commit", "leave out --commit"
	case envSet:
		return fmt.Sprintf("$PICKUP_COMMIT=%s", getenv("PICKUP_COMMIT")), "unset PICKUP_COMMIT (or set it to 0)"
	}
	path := filepath.Join(b.Dir, sessions.ConfigFile)
	where := path
	if line := b.ConfigLine("commit"); line > 0 {
		where = fmt.Sprintf("%s:%d", path, line)
	}
	return "commit: true in " + where, "set commit: false in " + path
}
