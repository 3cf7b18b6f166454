package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/sessions"
)

// Hands-free interactive sessions. With auto_next: true in the board's
// config.yaml (or $PICKUP_AUTO_NEXT=1 in the environment Claude Code was
// started with; $PICKUP_AUTO_NEXT=0 opts one session out), the Stop hook
// feeds a Claude Code session that stops holding no session the next one
// by priority: it claims it for the session and blocks the stop, telling
// the agent which session it now holds and to work on it.
//
// It never loops without progress. A session that holds a session is
// never given another (it stops, and a person decides). A stop that
// Claude Code makes while continuing after a Stop hook (stop_hook_active)
// is fed only if the session finished what it was fed last: one that
// released it, or stopped with nothing done, is let stop. With
// $PICKUP_TAG / $PICKUP_NOT_TAG (comma-separated) in Claude Code's
// environment, only sessions that match are fed.

// AutoNextEnv opts one Claude Code session in (1) or out (0) of auto_next,
// whatever the board says.
const AutoNextEnv = "PICKUP_AUTO_NEXT"

// stopInput is what the Stop hook reads of its input.
type stopInput struct {
	SessionID      string `json:"session_id"`
	Cwd            string `json:"cwd"`
	StopHookActive bool   `json:"stop_hook_active"`
}

// fedPath records the session the Stop hook last gave owner.
func fedPath(boardDir, owner string) string {
	return filepath.Join(RuntimeDir(boardDir), "fed", owner)
}

func (h *Hooks) stop(stdin io.Reader) error {
	if v := h.Getenv(AutoNextEnv); v == "0" || v == "false" {
		_, _ = io.Copy(io.Discard, stdin)
		return nil // opted out: not even the board is read
	}
	data, err := io.ReadAll(io.LimitReader(stdin, maxHookInput))
	_, _ = io.Copy(io.Discard, stdin)
	if err != nil {
		return fmt.Errorf("read input: %w", err)
	}
	var in stopInput
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("read input: %w", err)
	}
	owner, dir, err := h.ownerAndBoard(in.SessionID, in.Cwd)
	if err != nil {
		return err
	}
	b, err := h.open(dir)
	if b == nil {
		return err
	}
	if v := h.Getenv(AutoNextEnv); v != "1" && v != "true" {
		cfg, err := b.Config()
		if err != nil || !cfg.AutoNext {
			return err // not opted in (a broken config.yaml: not either)
		}
	}
	if _, _, ok := h.givenByWork(b); ok {
		return nil // pickup work's agent works the one session it was given
	}
	if held, err := b.ListOwner(owner); len(held) > 0 || (err != nil && !errors.Is(err, fs.ErrNotExist)) {
		return err // it holds one: never a second
	}
	fed := fedPath(b.Dir, owner)
	if in.StopHookActive {
		// Continuing after a Stop hook: fed again only if it finished
		// what it was fed.
		last, err := fsx.ReadRegular(fed)
		id := strings.TrimSpace(string(last))
		if err != nil || sessions.ValidateID(id) != nil {
			return nil
		}
		if info, err := os.Lstat(b.Path(sessions.Done, "", id)); err != nil || !info.Mode().IsRegular() {
			return nil // released, reaped or not finished: let it stop
		}
	}
	filter, err := sessions.NewTagFilter(splitEnvList(h.Getenv("PICKUP_TAG")), splitEnvList(h.Getenv("PICKUP_NOT_TAG")))
	if err != nil {
		return fmt.Errorf("$PICKUP_TAG, $PICKUP_NOT_TAG: %w", err)
	}
	p, err := h.Invoker()
	if err != nil {
		return err
	}
	// The claim ties the lease to the Claude Code process, as a claim by
	// the agent's own pickup next would.
	if _, err := h.leases(b).Heartbeat(owner, claim.Holder(p)); err != nil {
		return err
	}
	cl, err := claim.New(b, owner)
	if err != nil {
		return err
	}
	var commit func(string)
	if h.Batch != nil {
		commit = h.Batch(b)
	}
	s, err := cl.NewQueue(claim.NextOptions{Filter: filter}).Next(context.Background())
	if errors.Is(err, claim.ErrNothingAvailable) {
		_ = os.Remove(fed)
		return nil // nothing to take: it stops
	}
	if err != nil {
		return err
	}
	if commit != nil {
		commit(fmt.Sprintf("pickup: next %s for %s session %s (auto_next)", s.ID, h.agent().Title, owner))
	}
	if err := os.MkdirAll(filepath.Dir(fed), 0o755); err == nil {
		_ = fsx.WriteReplace(fed, []byte(s.ID+"\n"), 0o644, false)
	}
	h.beat(b, owner)
	reason := fmt.Sprintf("pickup (auto_next): you hold no session, so pickup claimed the next one for you, and it is yours now: %s (file: %s). "+
		"Work on it now as /pickup says: read it with `pickup show %s`, do the work, then `pickup done %s`; "+
		"to give it back unfinished, `pickup release %s`. Do not claim another session.",
		h.Describe(s), s.Path, s.ID, s.ID, s.ID)
	out, _ := json.Marshal(map[string]string{"decision": "block", "reason": reason})
	_, err = h.Stdout.Write(append(out, '\n'))
	return err
}

func splitEnvList(v string) []string {
	var out []string
	for _, t := range strings.Split(v, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}
