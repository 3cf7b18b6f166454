package gitremote

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/sessions"
)

// refs returns the refs under refs/pickup/ with their commits: one git
// process for the board's tip, the last fetched tip and the peers'
// heartbeat refs.
func (s *Board) refs(ctx context.Context) (map[string]string, error) {
	out, err := s.Repo.Run(ctx, "for-each-ref", "--format=%(objectname) %(refname)", "refs/pickup/")
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if sha, ref, ok := strings.Cut(l, " "); ok {
			m[ref] = sha
		}
	}
	return m, nil
}

// fetch brings the remote's board branch to refFetched and the owners'
// heartbeat refs to refs/pickup/peers/, with the clone's lock held, and
// returns the refs. A remote without the branch is ErrNoBoardBranch; one
// that cannot be reached, a *RemoteError.
func (s *Board) fetch(ctx context.Context) (map[string]string, error) {
	for try := 0; ; try++ {
		if err := s.fetchInto(ctx, refFetched, refPeers, refWitness); err != nil {
			return nil, err
		}
		refs, err := s.refs(ctx)
		if err != nil || try == 2 || !s.torn(ctx, refs[refWitness+s.Branch], refs[refFetched]) {
			return refs, err
		}
	}
}

// torn reports whether a fetch may have read the board branch just before
// a push moved it and its witness, and the witness just after (git reads
// the remote's refs one at a time): the branch is behind the witness.
// That is also what a person's force push back looks like: fetching
// again tells them apart.
func (s *Board) torn(ctx context.Context, witness, fetched string) bool {
	if witness == "" || fetched == "" || witness == fetched {
		return false
	}
	behind, err := s.isAncestor(ctx, fetched, witness)
	return err == nil && behind
}

// fetchInto fetches the board branch to ref, the heartbeat refs under
// peers and the pushed tips under witness.
func (s *Board) fetchInto(ctx context.Context, ref, peers, witness string) error {
	_, err := s.Repo.Run(ctx, "fetch", "--quiet", "--no-tags", "--no-auto-maintenance", "--no-write-fetch-head", "--no-recurse-submodules", "--refmap=", s.Remote,
		"+refs/heads/"+s.Branch+":"+ref, "+"+ownersRef+"*:"+peers+"*", "+"+tipsRef+"*:"+witness+"*")
	if err != nil {
		var ge *gitx.Error
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "couldn't find remote ref") {
			return fmt.Errorf("%w: %s has no branch %s", ErrNoBoardBranch, s.Remote, s.Branch)
		}
		if de := diskFull(err, s.Repo.CommonDir); de != nil {
			return de // not the remote's failure: no room here for what it sent
		}
		return s.remoteErr("fetch", err)
	}
	return nil
}

// Refresh fetches the board branch and brings the board directory in
// line with it. It reports whether the remote had changed. The fetch (the
// round trip) runs without the clone's lock, into refs of this process's
// own, so that the processes of a clone fetch at once and take turns only
// to apply what they fetched.
func (s *Board) Refresh(ctx context.Context) (bool, error) {
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	tmp := fmt.Sprintf("refs/pickup/tmp/%d-%x/", os.Getpid(), rnd)
	var known map[string]string // the refs read below, tmp's among them
	defer func() { s.dropRefs(ctx, tmp, known) }()
	// What this clone had seen before the fetch began: the fetch must
	// show it or a descendant (the branch only moves forward).
	before := s.readRef(ctx, refBoard)
	if err := s.fetchInto(ctx, tmp+"board", tmp+"peers/", tmp+"witness/"); err != nil {
		return false, s.gone(before, err)
	}
	unlock, err := s.lock()
	if err != nil {
		return false, err
	}
	defer unlock()
	refs, err := s.refs(ctx)
	if err != nil {
		return false, err
	}
	known = refs
	peers := map[string]string{}
	for ref, sha := range refs {
		if owner, ok := strings.CutPrefix(ref, tmp+"peers/"); ok {
			peers[refPeers+owner] = sha
		}
	}
	s.seePeers(peers)
	fetched, board := refs[tmp+"board"], refs[refBoard]
	if witness := refs[tmp+"witness/"+s.Branch]; s.torn(ctx, witness, fetched) {
		// Behind its witness: a push between the reads of the two refs,
		// or a force push back. Fetch again (with the lock, rarely).
		again, err := s.fetch(ctx)
		if err != nil {
			return false, s.gone(before, err)
		}
		fetched = again[refFetched]
		refs[tmp+"witness/"+s.Branch] = again[refWitness+s.Branch]
	}
	if err := s.forward(ctx, refs[tmp+"witness/"+s.Branch], fetched); err != nil {
		return false, err
	}
	if fetched == board {
		s.markFresh()
		return false, nil
	}
	if board != "" {
		ahead, err := s.isAncestor(ctx, board, fetched)
		if err != nil {
			return false, fmt.Errorf("shared board: %w", err)
		}
		if !ahead {
			// A push of this clone may have taken the board past what
			// this fetch saw: then the fetch shows what this clone had
			// seen before it began, or a descendant, and the board
			// descends from it. Anything else is the remote going
			// backwards.
			if err := s.forward(ctx, before, fetched); err != nil {
				return false, err
			}
			if behind, err := s.isAncestor(ctx, fetched, board); err != nil || !behind || board == before {
				if err != nil {
					return false, fmt.Errorf("shared board: %w", err)
				}
				return false, &HistoryError{Remote: s.Remote, Branch: s.Branch, Seen: board, Now: fetched}
			}
			s.markFresh()
			return false, nil
		}
	}
	if err := s.apply(ctx, board, fetched); err != nil {
		return false, err
	}
	_, _ = s.Repo.Run(ctx, "update-ref", refFetched, fetched)
	s.markFresh()
	return true, nil
}

// freshMark is the file whose mtime is the last fetch of this clone that
// the board directory and the peers' heartbeats reflect.
func (s *Board) freshMark() string { return filepath.Join(s.dir, "fetched-at") }

// markFresh notes a fetch applied (the clone's lock held).
func (s *Board) markFresh() {
	now := time.Now()
	if err := os.Chtimes(s.freshMark(), now, now); errors.Is(err, fs.ErrNotExist) {
		_ = os.WriteFile(s.freshMark(), nil, 0o644)
	}
}

// FetchedWithin reports whether a process of this clone fetched the board
// branch and the heartbeat refs, and applied them, less than d ago. A
// transition needs no fetch before it for its correctness (the push is
// the compare-and-swap, and a refused one fetches): a recent fetch only
// spares the round trip that keeps the candidates and the peers'
// heartbeats current.
func (s *Board) FetchedWithin(d time.Duration) bool {
	info, err := os.Stat(s.freshMark())
	if err != nil {
		return false
	}
	age := time.Since(info.ModTime())
	return age >= 0 && age < d
}

// dropRefs deletes the refs under prefix, with one git process: those of
// known if given (read since they were made), else those listed by git.
func (s *Board) dropRefs(ctx context.Context, prefix string, known map[string]string) {
	var out string
	if known != nil {
		var b strings.Builder
		for ref := range known {
			if strings.HasPrefix(ref, prefix) {
				b.WriteString("delete " + ref + "\n")
			}
		}
		out = b.String()
	} else {
		var err error
		if out, err = s.Repo.Run(ctx, "for-each-ref", "--format=delete %(refname)", prefix); err != nil {
			return
		}
	}
	if strings.TrimSpace(out) == "" {
		return
	}
	_, _ = s.Repo.RunIn(ctx, []byte(out), nil, "update-ref", "--stdin")
}

// change is a file that differs between two trees.
type change struct {
	path     string
	old, new string // blob shas, "" where absent
}

// diff lists the files that differ between two commits (from "" is the
// empty board).
func (s *Board) diff(ctx context.Context, from, to string) ([]change, error) {
	if from == "" {
		t, err := s.lsTree(ctx, to)
		if err != nil {
			return nil, err
		}
		var out []change
		for p, e := range t {
			out = append(out, change{path: p, new: e.sha})
		}
		return out, nil
	}
	raw, err := s.Repo.Run(ctx, "diff-tree", "-r", "-z", "--no-renames", from, to)
	if err != nil {
		return nil, err
	}
	// Records: ":oldmode newmode oldsha newsha status\0path\0".
	var out []change
	fields := strings.Split(raw, "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		f := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(f) != 5 {
			i--
			continue
		}
		c := change{path: fields[i+1], old: f[2], new: f[3]}
		if strings.Trim(c.old, "0") == "" {
			c.old = ""
		}
		if strings.Trim(c.new, "0") == "" {
			c.new = ""
		}
		out = append(out, c)
	}
	return out, nil
}

// apply changes the board directory from what commit from holds to what
// commit to holds, and moves refBoard to it. A session is changed here only
// if it is where from had it: one that a local transition has moved since
// (its push is under way, or waits for the lock) is left to that
// transition, which finds out at the remote whether it stands.
func (s *Board) apply(ctx context.Context, from, to string) error {
	changes, err := s.diff(ctx, from, to)
	if err != nil {
		return fmt.Errorf("shared board: read %s: %w", to, err)
	}
	type move struct {
		oldPath, newPath, sha string
	}
	byID := map[string]*move{}
	var others []change
	var shas []string
	for _, c := range changes {
		id, _, ok := sessionPath(c.path)
		if !ok {
			if otherFiles[c.path] {
				others = append(others, c)
				if c.new != "" {
					shas = append(shas, c.new)
				}
				if c.path == sessions.EventLogFile && c.old != "" {
					shas = append(shas, c.old)
				}
			}
			continue
		}
		m := byID[id]
		if m == nil {
			m = &move{}
			byID[id] = m
		}
		if c.old != "" {
			m.oldPath = c.path
		}
		if c.new != "" {
			m.newPath, m.sha = c.path, c.new
			shas = append(shas, c.new)
		}
	}
	blobs, err := s.Repo.CatBlobs(ctx, shas...)
	if err != nil {
		return fmt.Errorf("shared board: read %s: %w", to, err)
	}
	for _, c := range others {
		if c.path == sessions.ConfigFile {
			// Before anything moves: a board whose settings no longer say
			// this shared board is not taken without a person's word.
			if err := s.checkFetchedConfig(blobs[c.new], c.new != ""); err != nil {
				return err
			}
		}
	}
	for id, m := range byID {
		if m.oldPath != "" && !s.exists(m.oldPath) {
			continue // moved here since: that transition's push decides
		}
		if m.oldPath == "" && from == "" {
			// A first checkout: the session may be here already, elsewhere.
			s.removeCopies(id, m.newPath)
		}
		if m.newPath != "" {
			if err := s.place(m.newPath, blobs[m.sha], m.newPath == m.oldPath); err != nil {
				return err
			}
		}
		if m.oldPath != "" && m.oldPath != m.newPath {
			if err := os.Remove(s.abs(m.oldPath)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("shared board: %w", err)
			}
		}
	}
	for _, c := range others {
		if c.path == sessions.EventLogFile && c.new != "" {
			s.fenceReaped(blobs[c.old], blobs[c.new])
		}
		if c.new == "" {
			_ = os.Remove(s.abs(c.path))
			continue
		}
		if err := s.place(c.path, blobs[c.new], true); err != nil {
			return err
		}
	}
	if _, err := s.Repo.Run(ctx, "update-ref", refBoard, to); err != nil {
		return fmt.Errorf("shared board: %w", err)
	}
	return nil
}

func (s *Board) abs(rel string) string { return filepath.Join(s.B.Dir, filepath.FromSlash(rel)) }

func (s *Board) exists(rel string) bool {
	info, err := os.Lstat(s.abs(rel))
	return err == nil && info.Mode().IsRegular()
}

// removeCopies removes session id's files other than keep (a first
// checkout of a board that this clone had a copy of).
func (s *Board) removeCopies(id, keep string) {
	places, err := s.B.Locate(id)
	if err != nil {
		return
	}
	for _, p := range places {
		if rel, err := filepath.Rel(s.B.Dir, p.Path); err == nil && filepath.ToSlash(rel) != keep {
			_ = os.Remove(p.Path)
		}
	}
}

// place writes content at rel, a path of the board. replace: the file may
// exist and is replaced (atomically: a temporary file renamed over it);
// otherwise it is created exclusively and an existing file is left alone.
// The directory must be the board's own, never a link.
func (s *Board) place(rel string, content []byte, replace bool) error {
	if filepath.ToSlash(filepath.Dir(rel)) == string(sessions.Todo) {
		// After the file is in place, never before: a listing that began
		// in between would stamp itself fresh without it (see
		// sessions.Board.PeekFresh).
		defer s.B.MarkChanged(sessions.Todo)
	}
	if dir := filepath.ToSlash(filepath.Dir(rel)); dir != "." {
		if err := s.B.CheckDir(dir); err != nil {
			return fmt.Errorf("shared board: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(s.abs(rel)), 0o755); err != nil {
			return fmt.Errorf("shared board: %w", err)
		}
	}
	path := s.abs(rel)
	if !replace {
		err := fsx.WriteNew(path, content, 0o644, !s.B.NoSync)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("shared board: write %s: %w", path, err)
		}
		return nil
	}
	if old, err := fsx.ReadRegular(path); err == nil && bytes.Equal(old, content) {
		return nil
	}
	// The temporary name matches the board's .gitignore (.*.md[0-9]*).
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".md"+strconv.Itoa(os.Getpid()))
	_ = os.Remove(tmp)
	if err := fsx.WriteNew(tmp, content, 0o644, !s.B.NoSync); err != nil {
		return fmt.Errorf("shared board: write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("shared board: write %s: %w", path, err)
	}
	return nil
}

// fenceReaped records here the reaps that other clones made (the events
// added to the log between old and new), so that a reaped owner of this
// clone is fenced as after a local reap: its later release, done or
// heartbeat of that session exits with ErrClaimLost, not "claimed by
// someone else".
func (s *Board) fenceReaped(old, new []byte) {
	added := new
	if bytes.HasPrefix(new, old) {
		added = new[len(old):]
	}
	events, _, err := sessions.ReadEvents(bytes.NewReader(added), "")
	if err != nil {
		return
	}
	if s.Leases == nil {
		return
	}
	for _, e := range events {
		owner, ok := strings.CutPrefix(e.From, "doing/")
		if e.Op != "reap" || !ok || sessions.ValidateOwner(owner) != nil {
			continue
		}
		_ = s.Leases.FenceStale(owner, e.ID, "reaped in another clone: "+e.Reason)
	}
}
