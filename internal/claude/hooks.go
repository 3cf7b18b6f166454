package claude

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
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/claimhook"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// The hooks that Claude Code runs: `pickup hook EVENT` with the event's
// JSON on stdin. A hook's owner is the session_id in that JSON.

// BeatEvery is how often the PostToolUse hook renews the lease; in between
// it returns after one stat.
const BeatEvery = time.Minute

// maxHookInput bounds what a hook reads of its input into memory; the rest
// (a large tool response) is drained unread.
const maxHookInput = 1 << 20

// Events are the hook events pickup handles, as `pickup hook` names them.
var Events = []string{"session-start", "pre-tool-use", "post-tool-use", "stop", "session-end"}

// Protocol is the version of what `pickup hook` understands: 1 the first
// three events; 2 adds pre-tool-use and --need. The plugin's SessionStart
// runs `pickup hook --need N session-start`: a pickup older than 2 fails
// on the flag, and the hook's shell line tells the user to upgrade; a
// pickup older than N says so itself. 4 adds stop (auto_next).
//
// The hooks of the other agents need no --need: they run `pickup hook
// --agent NAME`, and a pickup older than --agent fails on the flag, which
// their SessionStart line turns into the message to upgrade.
const Protocol = 4

// InstallWays and UpgradeWays name the three ways to install pickup (npm,
// go install, a release archive: scripts/release builds the last two's
// files), for the messages the hooks print when pickup is missing or too
// old, which Claude relays to the user. The plugin's hooks.json says the
// same in its shell lines (TestPluginHooksSayHowToInstall).
const (
	InstallWays = "`npm install -g @pickup-dev/pickup`; `go install github.com/pickup-dev/pickup@latest` " +
		"(into $(go env GOPATH)/bin, which must be on the PATH); or a release archive from " +
		"https://github.com/pickup-dev/pickup/releases, its pickup put in a folder on the PATH"
	UpgradeWays = "`npm install -g @pickup-dev/pickup@latest`, `go install github.com/pickup-dev/pickup@latest`, " +
		"or a newer release archive from https://github.com/pickup-dev/pickup/releases"
)

// Hooks runs pickup's hooks. The command line fills it in, so that the
// hooks find and open the board, and follow processes, exactly as every
// other pickup command does.
type Hooks struct {
	Stdout io.Writer
	Getenv func(string) string
	Now    func() time.Time
	Proc   proc.Env
	// Owner, when not empty, is used instead of the input's session_id
	// (pickup --owner).
	Owner string
	// Agent is the agent that runs the hooks (--agent); nil: Claude Code.
	Agent *Agent
	// Need is the protocol the hooks' installer needs (--need); 0: any.
	Need int
	// Version names this pickup, for the message when Need is too high.
	Version string
	// Getwd is the process's working directory, for a tool input's
	// relative path when the input has no cwd; nil: none.
	Getwd func() (string, error)
	// RepoTop returns the top of the repository (its main work tree) that
	// a working directory belongs to, else the directory itself; nil: not
	// known, and the PreToolUse hook approves no pickup command.
	RepoTop func(cwd string) string
	// BoardDir returns the board for a working directory ("" for the
	// process's own).
	BoardDir func(cwd string) (string, error)
	// Open opens a board leniently (a bad config.yaml must not block
	// Claude Code), wired as the command line wires it (commit mode).
	Open func(dir string) (*sessions.Board, error)
	// Batch, if set, makes the transitions on b one git commit in commit
	// mode, made when the returned function runs; SessionEnd releases
	// everything in one commit.
	Batch func(b *sessions.Board) (commit func(subject string))
	// Invoker is the Claude Code process that ran the hook.
	Invoker func() (proc.Process, error)
	// Describe formats a session for a line of output.
	Describe func(sessions.Session) string
	// Beat, if set, tells other clones of a shared board that owner is
	// alive, when the lease here was renewed. It must return at once (the
	// command line pushes in a detached process).
	Beat func(b *sessions.Board, owner string)
}

// Input is what pickup reads of the JSON a Claude Code hook receives.
type Input struct {
	SessionID string
	Cwd       string
}

// ParseInput reads the fields pickup needs from a hook's JSON input. It
// stops as soon as it has them: Claude Code sends session_id and cwd first,
// before a tool's input and response, which may be large.
func ParseInput(data []byte) (Input, error) {
	var in Input
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

// Run runs one hook event with the JSON input read from stdin.
func (h *Hooks) Run(event string, stdin io.Reader) error {
	if !slices.Contains(Events, event) {
		return fmt.Errorf("unknown hook event %q: give one of %s", event, strings.Join(Events, ", "))
	}
	if h.Need > Protocol {
		_, _ = io.Copy(io.Discard, stdin)
		h.printf("pickup: the pickup on the PATH (%s) is older than the Claude Code integration needs (hook protocol %d, this one has %d), so its hooks do nothing. "+
			"Tell the user: upgrade it the way it was installed (%s), then start a new session.\n", h.Version, h.Need, Protocol, UpgradeWays)
		return nil
	}
	if a := h.agent(); a.jsonOutput && event != "pre-tool-use" && event != "stop" {
		// The agent reads stdout as JSON: SessionStart's text goes in
		// as additional context, the others print nothing.
		out := h.Stdout
		var text bytes.Buffer
		h.Stdout = &text
		defer func() {
			h.Stdout = out
			if event == "session-start" && text.Len() > 0 {
				_, _ = out.Write(contextJSON("SessionStart", text.String()))
			}
		}()
	}
	switch event {
	case "pre-tool-use":
		return h.preToolUse(stdin)
	case "stop":
		return h.stop(stdin)
	}
	data, err := io.ReadAll(io.LimitReader(stdin, maxHookInput))
	// Drain the rest, so that Claude Code never writes into a closed pipe.
	_, _ = io.Copy(io.Discard, stdin)
	if err != nil {
		return fmt.Errorf("read input: %w", err)
	}
	in, err := ParseInput(data)
	if err != nil {
		return err
	}
	owner, dir, err := h.ownerAndBoard(in.SessionID, in.Cwd)
	if err != nil {
		return err
	}
	switch event {
	case "post-tool-use":
		return h.postToolUse(dir, owner)
	case "session-start":
		var src struct {
			Source string `json:"source"`
		}
		_ = json.Unmarshal(data, &src) // small: read whole for its source
		return h.sessionStart(dir, owner, src.Source)
	default:
		var end struct {
			Reason string `json:"reason"`
		}
		_ = json.Unmarshal(data, &end)
		return h.sessionEnd(dir, owner, end.Reason)
	}
}

// ownerAndBoard returns the owner a hook acts for and the absolute path of
// its board, from the session_id and cwd Claude Code sent. The owner is the
// Claude Code session, not $PICKUP_OWNER: under `pickup work -- claude ...`
// that names the worker, whose claim the session must not release. An
// explicit --owner still wins. A cwd that is not absolute is ignored.
func (h *Hooks) ownerAndBoard(sessionID, cwd string) (owner, dir string, err error) {
	owner = h.Owner
	if owner == "" {
		owner = sessionID
	}
	if err := sessions.ValidateOwner(owner); err != nil {
		return "", "", fmt.Errorf("session_id: %w", err)
	}
	if !filepath.IsAbs(cwd) {
		cwd = ""
	}
	dir, err = h.BoardDir(cwd)
	if err != nil {
		return "", "", err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", "", err
	}
	return owner, dir, nil
}

// agent is the agent running the hooks.
func (h *Hooks) agent() *Agent {
	if h.Agent == nil {
		return Claude
	}
	return h.Agent
}

// contextJSON is a hook's output that adds text to the agent's context,
// as Codex CLI and Gemini CLI read it.
func contextJSON(event, text string) []byte {
	b := []byte(`{"hookSpecificOutput":{"hookEventName":`)
	b = appendJSONString(b, event)
	b = append(b, `,"additionalContext":`...)
	b = appendJSONString(b, text)
	return append(b, "}}\n"...)
}

func (h *Hooks) leases(b *sessions.Board) *claim.Leases {
	l := &claim.Leases{Board: b, Now: h.Now}
	claimhook.UseSystem(l, h.Proc)
	return l
}

func (h *Hooks) printf(format string, args ...any) {
	fmt.Fprintf(h.Stdout, format, args...)
}

// open opens the board at dir; no board is (nil, nil): hooks installed
// and no board (yet) is nothing to do.
func (h *Hooks) open(dir string) (*sessions.Board, error) {
	b, err := h.Open(dir)
	if errors.Is(err, sessions.ErrNoBoard) {
		return nil, nil
	}
	return b, err
}

// postToolUse renews the lease at most once per BeatEvery. The fast path,
// taken after almost every tool use, is one stat of the owner's timestamp
// file.
func (h *Hooks) postToolUse(boardDir, owner string) error {
	now := h.Now()
	beat := beatPath(boardDir, owner)
	if info, err := os.Stat(beat); err == nil {
		if age := now.Sub(info.ModTime()); age >= 0 && age < BeatEvery {
			return nil
		}
	}
	b, err := h.open(boardDir)
	if b == nil {
		return err
	}
	if err := touch(beat, now); err != nil {
		return err
	}
	p, err := h.Invoker()
	if err != nil {
		return err
	}
	// Heartbeat renews it and adds this Claude Code process to
	// the lease, should it be missing (a lease kept at the end of an
	// earlier run of this session, now resumed).
	if _, err = h.leases(b).Heartbeat(owner, claim.Holder(p)); err == nil {
		h.beat(b, owner)
	}
	return err
}

func (h *Hooks) beat(b *sessions.Board, owner string) {
	if h.Beat != nil {
		h.Beat(b, owner)
	}
}
