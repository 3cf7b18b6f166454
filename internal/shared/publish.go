package shared

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/fsx"
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

// Publish is the board's Arbiter: it makes the transition e, which has
// just happened in the board directory, a commit on the remote's board
// branch, and reports whether it stands. A refusal undoes the local move
// (the session goes where the remote has it) and records nothing.
func (s *Board) Publish(e sessions.Event) error {
	ctx := context.Background()
	id := e.ID
	src, dst := s.rel(e.Src), s.rel(e.Dst)
	var content []byte
	if dst != "" {
		data, err := fsx.ReadRegular(e.Dst)
		if err != nil {
			return &claim.Error{Op: e.Op, ID: id, From: e.Src, To: e.Dst, Err: fmt.Errorf("shared board: read %s: %w", e.Dst, err)}
		}
		content = data
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	line = append(line, '\n')

	unlock, err := s.lock()
	if err != nil {
		return s.undoLocal(ctx, e, nil, err)
	}
	locked := true
	defer func() {
		if locked {
			unlock()
		}
	}()
	attempts := s.Attempts
	if attempts <= 0 {
		attempts = DefaultAttempts
	}
	for attempt := 1; ; attempt++ {
		refs, err := s.refs(ctx)
		if err != nil {
			return s.undoLocal(ctx, e, nil, s.remoteErr(e.Op, err))
		}
		tip := refs[refBoard]
		if f := refs[refFetched]; f != "" && f != tip {
			// Another process fetched without applying (it was stopped):
			// catch up first.
			if err := s.apply(ctx, tip, f); err != nil {
				return s.undoLocal(ctx, e, nil, err)
			}
			tip = f
		}
		t, err := s.lsTree(ctx, tip)
		if err != nil {
			return s.undoLocal(ctx, e, nil, s.remoteErr(e.Op, err))
		}
		cur, found := t.find(id)
		if (src != "" && (!found || cur.path != src)) || (src == "" && found) {
			return s.undoLocal(ctx, e, t, s.lost(e, cur, found))
		}
		commit, logContent, err := s.build(ctx, t, tip, e, src, dst, content, line)
		if err != nil {
			return s.undoLocal(ctx, e, t, s.remoteErr(e.Op, err))
		}
		_, err = s.Repo.Run(ctx, "push", "--quiet", "--no-verify", s.Remote, commit+":refs/heads/"+s.Branch)
		if err == nil {
			if _, err := s.Repo.Run(ctx, "update-ref", refBoard, commit); err == nil {
				_, _ = s.Repo.Run(ctx, "update-ref", refFetched, commit)
			}
			// The board directory's history is the branch's.
			_ = s.place(sessions.EventLogFile, logContent, true)
			return nil
		}
		if !pushRejected(err) || attempt >= attempts {
			if pushRejected(err) {
				err = fmt.Errorf("the remote refused %d pushes in a row because others pushed first: %w", attempt, err)
			}
			return s.undoLocal(ctx, e, t, s.remoteErr(e.Op, err))
		}
		// Someone pushed first: look at what they did, then try again on
		// their tip. The lock is let go during the pause, so that this
		// clone's other processes go on.
		unlock()
		locked = false
		s.sleep(s.backoff(attempt))
		if unlock, err = s.lock(); err != nil {
			return s.undoLocal(ctx, e, nil, err)
		}
		locked = true
		refs, err = s.fetch(ctx)
		if err != nil {
			return s.undoLocal(ctx, e, nil, err)
		}
		s.seePeers(refs)
		if refs[refFetched] != refs[refBoard] {
			if err := s.apply(ctx, refs[refBoard], refs[refFetched]); err != nil {
				return s.undoLocal(ctx, e, nil, err)
			}
		}
	}
}

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
	le := &LostError{Remote: s.Remote, Branch: s.Branch, kind: claim.ErrSessionNotAvailable}
	ce := &claim.Error{Op: e.Op, ID: e.ID, From: e.Src, To: e.Dst, Err: le, Arbiter: true}
	if found {
		le.Where = strings.TrimSuffix(filepath.ToSlash(filepath.Dir(cur.path)), "/")
		ce.State, ce.Holder = cur.state, cur.owner
	}
	switch {
	case e.Src == "":
		le.kind = claim.ErrConflict
	case (e.Op == "done" || e.Op == "release") && e.Owner != "":
		le.kind = claim.ErrClaimLost
	case !found:
		le.kind = claim.ErrSessionNotFound
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

// build makes the commit of transition e on tip (whose tree is t): the
// session's file leaves src and arrives at dst with content, and line is
// appended to the event log. It returns the commit and the new log.
func (s *Board) build(ctx context.Context, t tree, tip string, e sessions.Event, src, dst string, content, line []byte) (string, []byte, error) {
	var logContent []byte
	if le, ok := t[sessions.EventLogFile]; ok {
		blobs, err := s.Repo.CatBlobs(ctx, le.sha)
		if err != nil {
			return "", nil, err
		}
		logContent = blobs[le.sha]
	}
	logContent = append(logContent[:len(logContent):len(logContent)], line...)
	index := []string{"GIT_INDEX_FILE=" + filepath.Join(s.dir, fmt.Sprintf("index.%d", os.Getpid()))}
	defer os.Remove(strings.TrimPrefix(index[0], "GIT_INDEX_FILE="))
	var info strings.Builder
	if src != "" && src != dst {
		fmt.Fprintf(&info, "0 0000000000000000000000000000000000000000\t%s\n", src)
	}
	objs := [][]byte{logContent}
	if dst != "" {
		objs = append(objs, content)
	}
	shas, err := s.hashObjects(ctx, objs...)
	if err != nil {
		return "", nil, err
	}
	fmt.Fprintf(&info, "100644 %s\t%s\n", shas[0], sessions.EventLogFile)
	if dst != "" {
		fmt.Fprintf(&info, "100644 %s\t%s\n", shas[1], dst)
	}
	readTree := []string{"read-tree", "--empty"}
	if tip != "" {
		readTree = []string{"read-tree", tip}
	}
	if _, err := s.Repo.RunIn(ctx, nil, index, readTree...); err != nil {
		return "", nil, err
	}
	if _, err := s.Repo.RunIn(ctx, []byte(info.String()), index, "update-index", "--index-info"); err != nil {
		return "", nil, err
	}
	treeSha, err := s.Repo.RunIn(ctx, nil, index, "write-tree")
	if err != nil {
		return "", nil, err
	}
	args := []string{"commit-tree", strings.TrimSpace(treeSha), "-m", commitMessage(e)}
	if tip != "" {
		args = append(args, "-p", tip)
	}
	commit, err := s.Repo.RunIn(ctx, nil, identity, args...)
	if err != nil {
		return "", nil, err
	}
	return strings.TrimSpace(commit), logContent, nil
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
