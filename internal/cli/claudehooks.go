package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

// pickup hook session-start | post-tool-use | session-end

// claudeBeatEvery is how often the PostToolUse hook renews the lease; in
// between it returns after one stat.
const claudeBeatEvery = time.Minute

// maxHookInput bounds what a hook reads of its input into memory; the rest
// (a large tool response) is drained unread.
const maxHookInput = 1 << 20

func (r *run) hookCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "hook",
		Hidden:    true,
		Usage:     "run one of pickup's Claude Code hooks (installed by pickup init --claude)",
		UsageText: "pickup hook session-start|post-tool-use|session-end < HOOK-INPUT-JSON",
		Description: "Reads the JSON that Claude Code sends a hook on stdin; the owner is its session_id.\n" +
			"session-start registers the owner's lease for the Claude Code process and prints the\n" +
			"session's claims (Claude Code adds them to the context). post-tool-use renews the lease\n" +
			"at most once a minute and prints nothing. session-end releases what the session still\n" +
			"holds, or keeps it when the board's config.yaml says keep_on_session_end: true.\n" +
			"A hook never fails the Claude Code session: errors go to stderr and it exits 0.",
		Action: func(c *ucli.Context) error {
			event := c.Args().First()
			if c.NArg() != 1 {
				event = "?"
			}
			if err := r.hook(event); err != nil {
				fmt.Fprintf(r.env.Stderr, "pickup: hook %s: %s\n", sanitize(event), sanitize(err.Error()))
			}
			return nil
		},
	}
}

// hookInput is what pickup reads of the JSON a Claude Code hook receives.
type hookInput struct {
	SessionID string
	Cwd       string
}

// parseHookInput reads the fields pickup needs from a hook's JSON input. It
// stops as soon as it has them: Claude Code sends session_id and cwd first,
// before a tool's input and response, which may be large.
func parseHookInput(data []byte) (hookInput, error) {
	var in hookInput
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return in, errors.New("the input is not a JSON object (pickup hook reads what Claude Code sends on stdin)")
	}
	for dec.More() {
		t, err := dec.Token()
		var val json.RawMessage
		if err == nil {
			err = dec.Decode(&val)
		}
		if err != nil {
			if in.SessionID != "" {
				break // the rest was cut at maxHookInput, or is broken: not needed
			}
			return in, fmt.Errorf("read input: %w", err)
		}
		key, _ := t.(string)
		switch key {
		case "session_id":
			_ = json.Unmarshal(val, &in.SessionID)
		case "cwd":
			_ = json.Unmarshal(val, &in.Cwd)
		}
		if in.SessionID != "" && in.Cwd != "" {
			break
		}
	}
	if in.SessionID == "" {
		return in, errors.New("the input has no session_id")
	}
	return in, nil
}

// hook runs one hook event with the JSON input on stdin.
func (r *run) hook(event string) error {
	switch event {
	case "session-start", "post-tool-use", "session-end":
	default:
		return fmt.Errorf("unknown hook event %q: give session-start, post-tool-use or session-end", event)
	}
	data, err := io.ReadAll(io.LimitReader(r.env.Stdin, maxHookInput))
	// Drain the rest, so that Claude Code never writes into a closed pipe.
	_, _ = io.Copy(io.Discard, r.env.Stdin)
	if err != nil {
		return fmt.Errorf("read input: %w", err)
	}
	in, err := parseHookInput(data)
	if err != nil {
		return err
	}
	// The owner is the Claude Code session, not $PICKUP_OWNER: under
	// `pickup work -- claude ...` that names the worker, whose claim the
	// session must not release. An explicit --owner still wins.
	owner := r.owner
	if owner == "" {
		owner = in.SessionID
	}
	if err := sessions.ValidateOwner(owner); err != nil {
		return fmt.Errorf("session_id: %w", err)
	}
	if in.Cwd != "" && filepath.IsAbs(in.Cwd) {
		env := *r.env
		env.Getwd = func() (string, error) { return in.Cwd, nil }
		r.env = &env
	}
	dir, err := r.boardDir()
	if err != nil {
		return err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return err
	}
	switch event {
	case "post-tool-use":
		return r.hookPostToolUse(dir, owner)
	case "session-start":
		return r.hookSessionStart(owner)
	default:
		return r.hookSessionEnd(owner)
	}
}

// claudeRuntimeDir is <board>/.pickup/claude: the hooks' machine-local files.
func claudeRuntimeDir(boardDir string) string {
	return filepath.Join(boardDir, sessions.RuntimeDirName, "claude")
}

func claudeBeatPath(boardDir, owner string) string {
	return filepath.Join(claudeRuntimeDir(boardDir), "beats", owner)
}

func claudePidPath(boardDir string, pid int) string {
	return filepath.Join(claudeRuntimeDir(boardDir), "pids", strconv.Itoa(pid)+".json")
}

// hookPostToolUse renews the lease at most once per claudeBeatEvery. The
// fast path, taken after almost every tool use, is one stat of the owner's
// timestamp file.
func (r *run) hookPostToolUse(boardDir, owner string) error {
	now := r.env.Now()
	beat := claudeBeatPath(boardDir, owner)
	if info, err := os.Stat(beat); err == nil {
		if age := now.Sub(info.ModTime()); age >= 0 && age < claudeBeatEvery {
			return nil
		}
	}
	b, err := r.openBoard(sessions.Open) // lenient: a bad config.yaml must not block Claude Code
	if errors.Is(err, sessions.ErrNoBoard) {
		return nil // hooks installed, no board (yet): nothing to keep alive
	}
	if err != nil {
		return err
	}
	if err := claudeTouch(beat, now); err != nil {
		return err
	}
	p, err := r.invokerProcess()
	if err != nil {
		return err
	}
	// Register renews the heartbeat and adds this Claude Code process to
	// the lease, should it be missing (a lease kept at the end of an
	// earlier run of this session, now resumed).
	_, err = r.leases(b).Register(owner, p)
	return err
}

// claudeTouch sets path's modification time to t, creating it if needed;
// never through a link (Open checked .pickup/claude/ itself).
func claudeTouch(path string, t time.Time) error {
	if err := claudeCheck(path); err != nil {
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

// claudePidRecord maps a Claude Code process to the session it runs.
type claudePidRecord struct {
	Owner   string       `json:"owner"`
	Process proc.Process `json:"process"`
}

// hookSessionStart registers the owner's lease for the Claude Code process,
// records which session that process runs, exports the session id to the
// Bash tool, and prints what the session holds.
func (r *run) hookSessionStart(owner string) error {
	b, err := r.openBoard(sessions.Open) // lenient: a bad config.yaml must not block Claude Code
	if errors.Is(err, sessions.ErrNoBoard) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	// The hook runs outside Claude Code's Bash sandbox, so it sees the
	// Claude Code process as the machine numbers it: the lease follows
	// that process, and commands in the sandbox use this record instead
	// of their own renumbered processes (claudeSessionProcess).
	if p, err := r.invokerProcess(); err != nil {
		errs = append(errs, err)
	} else {
		if _, err := r.leases(b).Register(owner, p); err != nil {
			errs = append(errs, err)
		}
		rec := claudePidRecord{Owner: owner, Process: p}
		if err := writeClaudePid(b.Dir, rec); err != nil {
			errs = append(errs, err)
		}
		if err := writeClaudeSession(b.Dir, rec); err != nil {
			errs = append(errs, err)
		}
	}
	if err := claudeTouch(claudeBeatPath(b.Dir, owner), r.env.Now()); err != nil {
		errs = append(errs, err)
	}
	r.pruneClaudeRecords(b)
	if err := r.exportSessionID(owner); err != nil {
		errs = append(errs, err)
	}
	if err := r.printClaims(b, owner); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// pruneClaudeRecords forgets the Claude Code processes that ended without a
// SessionEnd (a crash, a killed terminal): their pid records, throttle
// files, and their leases if they hold nothing (a lease with claims stays:
// it is how next finds those claims and returns them).
func (r *run) pruneClaudeRecords(b *sessions.Board) {
	dir := filepath.Dir(claudePidPath(b.Dir, 0))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	env := proc.Env{Hostname: r.env.Hostname}
	leases := r.leases(b)
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		rec, ok := readClaudePid(path)
		if !ok || sessions.ValidateOwner(rec.Owner) != nil {
			continue
		}
		if env.Liveness(rec.Process, env.Self()) != proc.Dead {
			continue // running, or nothing can be proven from here
		}
		_ = os.Remove(path)
		if s, ok := readClaudePid(claudeSessionPath(b.Dir, rec.Owner)); ok && s.Process.Same(rec.Process) {
			_ = os.Remove(claudeSessionPath(b.Dir, rec.Owner))
		}
		_ = os.Remove(claudeBeatPath(b.Dir, rec.Owner))
		if held, err := b.ListOwner(rec.Owner); len(held) > 0 || (err != nil && !errors.Is(err, fs.ErrNotExist)) {
			continue
		}
		if l, err := leases.Get(rec.Owner); err == nil && len(l.Holders) == 1 && l.Holders[0].Same(rec.Process) {
			_ = leases.Remove(rec.Owner)
		}
	}
}

func writeClaudePid(boardDir string, rec claudePidRecord) error {
	return writeClaudeRecord(boardDir, claudePidPath(boardDir, rec.Process.PID), rec)
}

// writeClaudeRecord writes rec to path whole, atomically, owner-only (it
// holds a process id; see sessions.Board.PrivatePerm).
func writeClaudeRecord(boardDir, path string, rec claudePidRecord) error {
	if err := claudeCheck(path); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return fsx.WriteReplace(path, append(data, '\n'), sessions.RuntimePerm(boardDir), false)
}

// claudeCheck refuses a link in place of path or of its directory
// (.pickup/claude/beats, pids or sessions; Open checked .pickup/claude).
func claudeCheck(path string) error {
	if err := fsx.CheckDir(filepath.Dir(path)); err != nil {
		return err
	}
	if info, err := os.Lstat(path); err == nil {
		return fsx.Unsafe(path, info.Mode(), false)
	}
	return nil
}

// exportSessionID appends `export CLAUDE_SESSION_ID=<id>` to the file that
// Claude Code gives SessionStart hooks in $CLAUDE_ENV_FILE and sources
// before each Bash command, so that pickup run by the agent without --owner
// finds the hooks' owner. The id is a valid owner name: no quoting needed.
func (r *run) exportSessionID(owner string) error {
	path := r.env.Getenv("CLAUDE_ENV_FILE")
	if path == "" {
		return nil
	}
	line := "export CLAUDE_SESSION_ID=" + owner + "\n"
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if bytes.HasSuffix(old, []byte(line)) || bytes.HasPrefix(old, []byte(line)) || bytes.Contains(old, []byte("\n"+line)) {
		return nil
	}
	if len(old) > 0 && old[len(old)-1] != '\n' {
		line = "\n" + line
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// printClaims prints, for Claude's context, who the session is on the board
// and what it holds.
func (r *run) printClaims(b *sessions.Board, owner string) error {
	list, err := b.ListOwner(owner)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	waiting := 0
	if entries, err := os.ReadDir(b.StateDir(sessions.Todo, "")); err == nil {
		for _, e := range entries {
			if _, ok := sessions.IsSessionName(e.Name()); ok && e.Type().IsRegular() {
				waiting++
			}
		}
	}
	// No "pass --owner ID" here: this text stays in the conversation, and
	// a fork of it would act as this session. pickup finds the owner from
	// $CLAUDE_CODE_SESSION_ID, which each session's commands carry.
	r.printf("pickup: this Claude Code session is owner %s on the board %s; pickup commands you run act as it (do not pass --owner).\n", owner, b.Dir)
	if len(list) == 0 {
		r.printf("It holds no sessions; %d wait in todo/. /pickup claims one.\n", waiting)
		return nil
	}
	r.printf("It holds %d session(s), claimed earlier and still yours:\n", len(list))
	for _, s := range list {
		r.printf("- %s\n  file: %s\n", describe(s), s.Path)
	}
	r.printf("Finish one with `pickup done ID`, hand it over with /handoff, or give it back with `pickup release ID`. Never move, edit or delete board files by hand.\n")
	return nil
}

// hookSessionEnd releases what the session still holds and ends its lease;
// with keep_on_session_end in the board's config.yaml it keeps the claims,
// under a lease without a process: no longer tied to this Claude Code
// process, they stay the session's until it resumes (claude --resume) or
// `pickup reap` finds them older than the stale period.
func (r *run) hookSessionEnd(owner string) error {
	b, err := r.openBoard(sessions.Open) // lenient: a bad config.yaml must not block Claude Code
	if errors.Is(err, sessions.ErrNoBoard) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	cfg, err := b.Config()
	if err != nil {
		errs = append(errs, fmt.Errorf("%w; releasing, the default", err))
	}
	leases := r.leases(b)
	list, _ := b.ListOwner(owner)
	if cfg.KeepOnSessionEnd && len(list) > 0 {
		// The claims outlive this Claude Code process: untie the lease
		// from it, so that its exit does not make them reapable at once.
		p, _ := r.invokerProcess()
		if _, err := leases.Detach(owner, p); err != nil {
			errs = append(errs, err)
		}
		for _, s := range list {
			r.printf("kept %s (keep_on_session_end)\n", describe(s))
		}
	} else {
		cl, err := claim.New(b, owner)
		if err != nil {
			return err
		}
		released, err := cl.ReleaseAll()
		if err != nil {
			errs = append(errs, err)
		}
		for _, s := range released {
			r.printf("released %s\n", describe(s))
		}
		if err := leases.Remove(owner); err != nil {
			errs = append(errs, err)
		}
	}
	_ = os.Remove(claudeBeatPath(b.Dir, owner))
	r.forgetPid(b.Dir, owner)
	return errors.Join(errs...)
}

// forgetPid removes the record of the Claude Code process running owner,
// unless it already names a later session of that process (after /clear).
func (r *run) forgetPid(boardDir, owner string) {
	p, err := r.invokerProcess()
	if err != nil {
		return
	}
	path := claudePidPath(boardDir, p.PID)
	if rec, ok := readClaudePid(path); ok && rec.Owner == owner {
		_ = os.Remove(path)
	}
	if rec, ok := readClaudePid(claudeSessionPath(boardDir, owner)); ok && rec.Process.Same(p) {
		_ = os.Remove(claudeSessionPath(boardDir, owner))
	}
}

func readClaudePid(path string) (claudePidRecord, bool) {
	data, err := fsx.ReadRegular(path)
	if err != nil || fsx.CheckDir(filepath.Dir(path)) != nil {
		return claudePidRecord{}, false // none, or only through a link
	}
	var rec claudePidRecord
	if json.Unmarshal(data, &rec) != nil {
		return claudePidRecord{}, false
	}
	return rec, true
}

// claudeOwner returns the session that the SessionStart hook recorded for
// the Claude Code process that ran this pickup (the process a lease would
// follow: --pid, $PICKUP_PID, else the parent walk), if its record is of
// that very process (same start time), not of an earlier one with its pid.
// ownerName falls back on it when no option or variable names the owner,
// so that an agent that forgot --owner still acts as its session.
func (r *run) claudeOwner() (string, bool) {
	dir, err := r.boardDir()
	if err != nil {
		return "", false
	}
	p, err := r.invokerProcess()
	if err != nil {
		return "", false
	}
	rec, ok := readClaudePid(claudePidPath(dir, p.PID))
	if !ok || !rec.Process.Same(p) || sessions.ValidateOwner(rec.Owner) != nil {
		return "", false
	}
	return rec.Owner, true
}
