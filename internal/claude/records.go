package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// The hooks' machine-local records under <board>/.pickup/claude/:
// beats/<owner> (PostToolUse's throttle), pids/<pid>.json (which session a
// Claude Code process runs) and sessions/<owner>.json (which process runs a
// session).

// RuntimeDir is <board>/.pickup/claude.
func RuntimeDir(boardDir string) string {
	return filepath.Join(boardDir, sessions.RuntimeDirName, "claude")
}

func beatPath(boardDir, owner string) string {
	return filepath.Join(RuntimeDir(boardDir), "beats", owner)
}

// PidPath is the record of the Claude Code process pid.
func PidPath(boardDir string, pid int) string {
	return filepath.Join(RuntimeDir(boardDir), "pids", strconv.Itoa(pid)+".json")
}

// SessionPath is where SessionStart records the Claude Code process that
// runs a session.
func SessionPath(boardDir, owner string) string {
	return filepath.Join(RuntimeDir(boardDir), "sessions", owner+".json")
}

// Record maps a Claude Code process to the session it runs.
type Record struct {
	Owner   string       `json:"owner"`
	Process proc.Process `json:"process"`
}

// ReadRecord reads a record; false if there is none, it is broken, or it
// could only be read through a link.
func ReadRecord(path string) (Record, bool) {
	data, err := fsx.ReadRegular(path)
	if err != nil || fsx.CheckDir(filepath.Dir(path)) != nil {
		return Record{}, false
	}
	var rec Record
	if json.Unmarshal(data, &rec) != nil {
		return Record{}, false
	}
	return rec, true
}

// WritePid records which session rec.Process runs.
func WritePid(boardDir string, rec Record) error {
	return writeRecord(boardDir, PidPath(boardDir, rec.Process.PID), rec)
}

func writeSession(boardDir string, rec Record) error {
	return writeRecord(boardDir, SessionPath(boardDir, rec.Owner), rec)
}

// writeRecord writes rec to path whole, atomically, owner-only (it holds a
// process id; see sessions.Board.PrivatePerm).
func writeRecord(boardDir, path string, rec Record) error {
	if err := checkPath(path); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if old, err := fsx.ReadRegular(path); err == nil && bytes.Equal(old, data) {
		return nil // SessionStart after /compact or /clear: already so; a write costs a create and a rename
	}
	return fsx.WriteReplace(path, data, sessions.RuntimePerm(boardDir), false)
}

// checkPath refuses a link in place of path or of its directory
// (.pickup/claude/beats, pids or sessions; Open checked .pickup/claude).
func checkPath(path string) error {
	if err := fsx.CheckDir(filepath.Dir(path)); err != nil {
		return err
	}
	if info, err := os.Lstat(path); err == nil {
		return fsx.Unsafe(path, info.Mode(), false)
	}
	return nil
}

// touch sets path's modification time to t, creating it if needed; never
// through a link.
func touch(path string, t time.Time) error {
	if err := checkPath(path); err != nil {
		return err
	}
	if err := os.Chtimes(path, t, t); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := fsx.WriteNew(path, nil, 0o644, false); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return os.Chtimes(path, t, t)
}

// OwnerOf returns the session that the SessionStart hook recorded for
// process p, if the record is of that very process (same start time), not
// of an earlier one with its pid. pickup falls back on it when no option or
// variable names the owner, so that an agent that forgot --owner still acts
// as its session.
func OwnerOf(boardDir string, p proc.Process) (string, bool) {
	rec, ok := ReadRecord(PidPath(boardDir, p.PID))
	if !ok || !rec.Process.Same(p) || sessions.ValidateOwner(rec.Owner) != nil {
		return "", false
	}
	return rec.Owner, true
}

// SessionProcess returns the Claude Code process that SessionStart recorded
// for owner, unless it provably exited.
func SessionProcess(boardDir, owner string, env proc.Env) (proc.Process, bool) {
	rec, ok := ReadRecord(SessionPath(boardDir, owner))
	if !ok || rec.Owner != owner || rec.Process.PID <= 0 {
		return proc.Process{}, false
	}
	if env.Liveness(rec.Process, env.Self()) == proc.Dead {
		return proc.Process{}, false
	}
	return rec.Process, true
}
