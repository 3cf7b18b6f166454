package gitremote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/sessions"
)

// LostError: the remote has the session elsewhere than the transition
// found it here; someone else moved it first. It matches
// claim.ErrSessionNotAvailable (claim.ErrClaimLost for this owner's done
// or release, claim.ErrConflict for a new session whose id exists).
type LostError struct {
	Remote, Branch string
	Where          string // where the remote has it ("" nowhere)
	kind           error
}

func (e *LostError) Error() string {
	where := "does not have it"
	if e.Where != "" {
		where = "has it in " + e.Where
	}
	return fmt.Sprintf("%v: the shared board (%s/%s) %s", e.kind, e.Remote, e.Branch, where)
}

func (e *LostError) Unwrap() error { return e.kind }

// rel is path relative to the board, '/'-separated; "" for "".
func (s *Board) rel(path string) string {
	if path == "" {
		return ""
	}
	r, err := filepath.Rel(s.B.Dir, path)
	if err != nil || strings.HasPrefix(r, "..") {
		return ""
	}
	return filepath.ToSlash(r)
}

// lost is the error of a transition that the remote settled otherwise.
func (s *Board) lost(e sessions.Event, cur place, found bool) error {
	le := &LostError{Remote: s.Remote, Branch: s.Branch, kind: arbiter.ErrSessionNotAvailable}
	ce := &arbiter.Refusal{Op: e.Op, ID: e.ID, From: e.Src, To: e.Dst, Err: le, Lost: true}
	if found {
		le.Where = strings.TrimSuffix(filepath.ToSlash(filepath.Dir(cur.path)), "/")
		ce.State, ce.Holder = cur.state, cur.owner
	}
	switch {
	case e.Src == "":
		le.kind = arbiter.ErrConflict
	case (e.Op == "done" || e.Op == "release") && e.Owner != "":
		le.kind = arbiter.ErrClaimLost
	case !found:
		le.kind = arbiter.ErrSessionNotFound
	}
	return ce
}

// undoLocal puts session e.ID back where the remote has it (t: the tree
// last seen; nil: read it), so that a transition the remote did not take
// leaves nothing moved here, and returns err.
func (s *Board) undoLocal(ctx context.Context, e sessions.Event, t tree, err error) error {
	if t == nil {
		refs, rerr := s.refs(ctx)
		if rerr != nil {
			return errors.Join(err, fmt.Errorf("shared board: could not undo %s %s: %w", e.Op, e.ID, rerr))
		}
		if t, rerr = s.lsTree(ctx, refs[refBoard]); rerr != nil {
			return errors.Join(err, fmt.Errorf("shared board: could not undo %s %s: %w", e.Op, e.ID, rerr))
		}
	}
	dst := s.rel(e.Dst)
	cur, found := t.find(e.ID)
	switch {
	case !found:
		if e.Dst != "" {
			_ = os.Remove(e.Dst)
		}
	case cur.path == dst:
		// Already where the remote has it.
	default:
		if s.moveBack(e.Dst, cur.path, t[cur.path].sha) {
			break
		}
		blobs, berr := s.Repo.CatBlobs(ctx, t[cur.path].sha)
		if berr == nil {
			berr = s.place(cur.path, blobs[t[cur.path].sha], true)
		}
		if berr != nil {
			return errors.Join(err, fmt.Errorf("shared board: could not undo %s %s: %w", e.Op, e.ID, berr))
		}
		if e.Dst != "" {
			_ = os.Remove(e.Dst)
		}
	}
	return err
}

// moveBack renames the session file at dst (absolute) back to rel, where
// the remote has it, if its content is the remote's (blob sha) and
// nothing is at rel: a claim, a done or a release only renames, and a
// rename needs no room on a full disk, where writing a copy would fail.
func (s *Board) moveBack(dst, rel, sha string) bool {
	if dst == "" {
		return false
	}
	data, err := fsx.ReadRegular(dst)
	if err != nil || gitx.HashObject("blob", data) != sha {
		return false
	}
	if filepath.ToSlash(filepath.Dir(rel)) == string(sessions.Todo) {
		defer s.B.MarkChanged(sessions.Todo) // (see place)
	}
	if s.B.CheckDir(filepath.ToSlash(filepath.Dir(rel))) != nil {
		return false
	}
	_ = os.MkdirAll(filepath.Dir(s.abs(rel)), 0o755)
	return fsx.RenameNoReplace(dst, s.abs(rel)) == nil
}

// identity signs pickup's commits, so that a clone without user.name and
// user.email still works.
var identity = []string{"GIT_AUTHOR_NAME=pickup", "GIT_AUTHOR_EMAIL=pickup@localhost", "GIT_COMMITTER_NAME=pickup", "GIT_COMMITTER_EMAIL=pickup@localhost"}

// hashObjects writes blobs and returns their shas, with one git process:
// the contents go through temporary files under the git directory.
func (s *Board) hashObjects(ctx context.Context, objs ...[]byte) ([]string, error) {
	var paths []string
	defer func() {
		for _, p := range paths {
			_ = os.Remove(p)
		}
	}()
	for i, o := range objs {
		p := filepath.Join(s.dir, fmt.Sprintf("obj.%d.%d", os.Getpid(), i))
		if err := os.WriteFile(p, o, 0o600); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	out, err := s.Repo.Run(ctx, append([]string{"hash-object", "-w", "--no-filters", "--"}, paths...)...)
	if err != nil {
		return nil, err
	}
	shas := strings.Fields(out)
	if len(shas) != len(objs) {
		return nil, fmt.Errorf("hash-object gave %d names for %d objects", len(shas), len(objs))
	}
	return shas, nil
}

// commitMessage says what the commit does, like commit mode's.
func commitMessage(e sessions.Event) string {
	verb := e.Op
	if verb == "next" {
		verb = "claim"
	}
	subject := fmt.Sprintf("pickup: %s %s", verb, e.ID)
	if e.Owner != "" {
		subject += " (" + e.Owner + ")"
	}
	from := e.From
	if from == "" {
		from = "(new)"
	}
	return subject + "\n\n" + from + " -> " + e.To + "\n"
}

// Settled waits until session id is here where the remote has it (a
// transition of this clone that is being pushed has finished, either
// way) and returns where that is: the holder a local loser names is then
// the winner at the remote, not a local racer that may lose there. It
// gives up after wait and returns what the remote had last.
func (s *Board) Settled(ctx context.Context, id string, wait time.Duration) (state sessions.State, owner string, found bool) {
	deadline := time.Now().Add(wait)
	for {
		unlock, err := s.lock()
		if err != nil {
			return "", "", false
		}
		refs, err := s.refs(ctx)
		var t tree
		if err == nil {
			t, err = s.lsTree(ctx, refs[refBoard])
		}
		unlock()
		if err != nil {
			return "", "", false
		}
		cur, ok := t.find(id)
		if !ok || s.exists(cur.path) || time.Now().After(deadline) || ctx.Err() != nil {
			return cur.state, cur.owner, ok
		}
		s.sleep(5 * time.Millisecond)
	}
}
