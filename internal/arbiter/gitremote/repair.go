package gitremote

// The repair of a board branch that a person rewrote or deleted (pickup
// sync --repair). The history the remote lost is known to the clones that
// saw it (refs/pickup/board) and to the remote itself
// (refs/pickup/tips/<branch>, which pickup pushes with every commit and
// a person's force push leaves behind). The repair is a merge commit on
// the remote's tip whose other parents are those lost tips: every clone,
// whichever side it saw, then sees the branch move forward again. Its
// tree replays the lost transitions onto the remote's tip, session by
// session, against the commit the two histories share:
//
//   - a session that only one side moved is where that side has it;
//   - a session that both moved: a finished one (done/, failed/) stays
//     finished; a claim in the lost history is kept over todo/; a claim
//     made since the rewrite is kept over a lost one (that owner's claim
//     stands; the other's done then exits 6), and reported.
//
// Nothing is deleted; the event log keeps both histories' lines.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pickup-dev/pickup/sessions"
)

// RepairReport says what a repair did.
type RepairReport struct {
	// Lost lists the sessions whose transitions the remote had lost, with
	// where the repair put them.
	Lost []LostSession `json:"lost"`
	// Conflicts: sessions that both histories moved, and the choice made.
	Conflicts []string `json:"conflicts,omitempty"`
	// Recreated: the branch was deleted and is made again.
	Recreated bool `json:"recreated,omitempty"`
	// Undone: sessions that the board here had elsewhere than the remote,
	// put back where the remote has them.
	Undone []Difference `json:"undone,omitempty"`
	Commit string       `json:"commit,omitempty"`
}

// LostSession is a session whose transitions a rewrite dropped.
type LostSession struct {
	ID     string   `json:"id"`
	Events []string `json:"events"` // the lost events, "op from -> to (owner)"
	Lost   string   `json:"lost"`   // where the lost history has it
	Remote string   `json:"remote"` // where the remote's tip has it ("" nowhere)
	Now    string   `json:"now,omitempty"`
}

// Damage fetches the remote's board branch and says what it lost against
// what this clone saw (and the tip pickup last pushed there): nothing if
// it only moved forward. deleted: the branch is gone.
func (s *Board) Damage(ctx context.Context) (lost []LostSession, deleted bool, err error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	seen := s.readRef(ctx, refBoard)
	refs, err := s.fetch(ctx)
	if errors.Is(err, ErrNoBoardBranch) {
		base, err := s.lastKnown(ctx, seen)
		if err != nil || base == "" {
			return nil, true, err
		}
		lost, err := s.lostSince(ctx, "", base)
		return lost, true, err
	}
	if err != nil {
		return nil, false, err
	}
	tip := refs[refFetched]
	for _, l := range s.lostTips(ctx, tip, seen, refs[refWitness+s.Branch]) {
		more, err := s.lostSince(ctx, tip, l)
		if err != nil {
			return nil, false, err
		}
		lost = mergeLost(lost, more)
	}
	return lost, false, nil
}

// lostTips are those of tips that tip does not contain, the later of two
// on one line only.
func (s *Board) lostTips(ctx context.Context, tip string, tips ...string) []string {
	var out []string
	for _, l := range tips {
		if l == "" || l == tip {
			continue
		}
		if ok, err := s.isAncestor(ctx, l, tip); err != nil || ok {
			continue
		}
		out = append(out, l)
	}
	if len(out) == 2 {
		if ok, _ := s.isAncestor(ctx, out[0], out[1]); ok {
			out = out[1:]
		} else if ok, _ := s.isAncestor(ctx, out[1], out[0]); ok {
			out = out[:1]
		}
	}
	return out
}

func mergeLost(a, b []LostSession) []LostSession {
	seen := map[string]bool{}
	for _, l := range a {
		seen[l.ID] = true
	}
	for _, l := range b {
		if !seen[l.ID] {
			a = append(a, l)
		}
	}
	sort.Slice(a, func(i, j int) bool { return a[i].ID < a[j].ID })
	return a
}

// logOf reads commit's event log ("" commit: none).
func (s *Board) logOf(ctx context.Context, commit string) ([]byte, error) {
	if commit == "" {
		return nil, nil
	}
	out, err := s.Repo.Run(ctx, "rev-parse", "-q", "--verify", commit+":"+sessions.EventLogFile)
	if err != nil {
		return nil, nil
	}
	sha := strings.TrimSpace(out)
	blobs, err := s.Repo.CatBlobs(ctx, sha)
	if err != nil {
		return nil, err
	}
	return blobs[sha], nil
}

// lostLines are the lines of lost's event log that tip's lacks, in
// order.
func (s *Board) lostLines(ctx context.Context, tip, lost string) ([]string, error) {
	tipLog, err := s.logOf(ctx, tip)
	if err != nil {
		return nil, err
	}
	lostLog, err := s.logOf(ctx, lost)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(tipLog), "\n") {
		have[l] = true
	}
	var out []string
	for _, l := range strings.Split(string(lostLog), "\n") {
		if l != "" && !have[l] {
			out = append(out, l)
			have[l] = true
		}
	}
	return out, nil
}

// lostSince lists the sessions that have events in lost's history and not
// in tip's, with where each has them.
func (s *Board) lostSince(ctx context.Context, tip, lost string) ([]LostSession, error) {
	lines, err := s.lostLines(ctx, tip, lost)
	if err != nil {
		return nil, err
	}
	events, _, err := sessions.ReadEvents(strings.NewReader(strings.Join(lines, "\n")+"\n"), "")
	if err != nil {
		return nil, err
	}
	tipTree, err := s.lsTree(ctx, tip)
	if err != nil {
		return nil, err
	}
	lostTree, err := s.lsTree(ctx, lost)
	if err != nil {
		return nil, err
	}
	byID := map[string]*LostSession{}
	var order []string
	for _, e := range events {
		l := byID[e.ID]
		if l == nil {
			l = &LostSession{ID: e.ID}
			byID[e.ID] = l
			order = append(order, e.ID)
			if p, ok := lostTree.find(e.ID); ok {
				l.Lost = dirOf(p.path)
			}
			if p, ok := tipTree.find(e.ID); ok {
				l.Remote = dirOf(p.path)
			}
		}
		from := e.From
		if from == "" {
			from = "(new)"
		}
		ev := fmt.Sprintf("%s %s -> %s", e.Op, from, e.To)
		if e.Owner != "" {
			ev += " (" + e.Owner + ")"
		}
		l.Events = append(l.Events, ev)
	}
	var out []LostSession
	for _, id := range order {
		out = append(out, *byID[id])
	}
	return out, nil
}

func dirOf(path string) string { return filepath.ToSlash(filepath.Dir(path)) }

// Repair makes the remote's board branch whole again and brings this
// clone's board in line with it: a rewritten branch gets a merge that
// replays the transitions it lost (see the top of this file); a deleted
// one is made again from the most complete history known (as pickup init
// --shared does); sessions that the board here has elsewhere than the
// remote (a move that never reached it) are put where the remote has
// them.
func (s *Board) Repair(ctx context.Context) (RepairReport, error) {
	var rep RepairReport
	_ = s.Flush(ctx) // what was queued goes first, or is undone
	for attempt := 1; ; attempt++ {
		done, err := s.repairOnce(ctx, &rep)
		if err != nil || done {
			if err != nil {
				return rep, err
			}
			break
		}
		if attempt == 10 {
			return rep, s.remoteErr("repair", errors.New("the board branch kept changing during the repair"))
		}
		s.sleep(s.backoff(attempt))
	}
	// Sessions here that the remote lacks, config.yaml; a deleted branch
	// is made again.
	if _, _, err := s.Join(ctx); err != nil {
		return rep, err
	}
	diffs, err := s.putBack(ctx)
	rep.Undone = diffs
	return rep, err
}

// repairOnce is one attempt of Repair's merge: false if the push lost a
// race.
func (s *Board) repairOnce(ctx context.Context, rep *RepairReport) (bool, error) {
	unlock, err := s.lock()
	if err != nil {
		return false, err
	}
	defer unlock()
	seen := s.readRef(ctx, refBoard)
	refs, err := s.fetch(ctx)
	if errors.Is(err, ErrNoBoardBranch) {
		rep.Recreated = true
		return true, nil // Join makes it again
	}
	if err != nil {
		return false, err
	}
	tip := refs[refFetched]
	lost := s.lostTips(ctx, tip, seen, refs[refWitness+s.Branch])
	if len(lost) == 0 {
		if err := s.apply(ctx, seen, tip); err != nil {
			return false, err
		}
		return true, nil
	}
	commit, report, err := s.merge(ctx, tip, lost)
	if err != nil {
		return false, err
	}
	if err := s.pushBoard(ctx, tip, commit); err != nil {
		if pushRejected(err) {
			return false, nil
		}
		return false, s.remoteErr("repair", err)
	}
	rep.Lost, rep.Conflicts, rep.Commit = report.Lost, report.Conflicts, commit
	if err := s.apply(ctx, seen, commit); err != nil {
		return true, err
	}
	_, _ = s.Repo.RunIn(ctx, []byte("update "+refBoard+" "+commit+"\nupdate "+refFetched+" "+commit+"\n"), nil, "update-ref", "--stdin")
	s.markFresh()
	return true, nil
}

// merge builds the repair commit on tip with the lost tips as its other
// parents.
func (s *Board) merge(ctx context.Context, tip string, lost []string) (string, RepairReport, error) {
	var rep RepairReport
	cur, err := s.lsTree(ctx, tip)
	if err != nil {
		return "", rep, err
	}
	logContent, err := s.logOf(ctx, tip)
	if err != nil {
		return "", rep, err
	}
	for _, l := range lost {
		base := ""
		if out, err := s.Repo.Run(ctx, "merge-base", tip, l); err == nil {
			base = strings.TrimSpace(out)
		}
		baseTree, err := s.lsTree(ctx, base)
		if err != nil {
			return "", rep, err
		}
		lostTree, err := s.lsTree(ctx, l)
		if err != nil {
			return "", rep, err
		}
		sessionsLost, err := s.lostSince(ctx, tip, l)
		if err != nil {
			return "", rep, err
		}
		ids := map[string]bool{}
		for p := range lostTree {
			if id, _, ok := sessionPath(p); ok {
				ids[id] = true
			}
		}
		for p := range cur {
			if id, _, ok := sessionPath(p); ok {
				ids[id] = true
			}
		}
		for id := range ids {
			b, inB := baseTree.find(id)
			lp, inL := lostTree.find(id)
			rp, inR := cur.find(id)
			if !inL || (inB && b.path == lp.path) || (inR && rp.path == lp.path) {
				continue // the lost history did not move it, or both agree
			}
			take := true
			if inR && !(inB && b.path == rp.path) {
				// Both histories moved it.
				var msg string
				take, msg = resolve(lp, rp)
				rep.Conflicts = append(rep.Conflicts, fmt.Sprintf("%s: %s in the lost history, %s on the remote: %s", id, dirOf(lp.path), dirOf(rp.path), msg))
				if !take {
					continue
				}
			}
			if take {
				if inR {
					delete(cur, rp.path)
				}
				cur[lp.path] = lostTree[lp.path]
			}
		}
		lines, err := s.lostLines(ctx, tip, l)
		if err != nil {
			return "", rep, err
		}
		if len(lines) > 0 {
			if len(logContent) > 0 && !bytes.HasSuffix(logContent, []byte("\n")) {
				logContent = append(logContent, '\n')
			}
			logContent = append(logContent, []byte(strings.Join(lines, "\n")+"\n")...)
		}
		for i := range sessionsLost {
			if p, ok := cur.find(sessionsLost[i].ID); ok {
				sessionsLost[i].Now = dirOf(p.path)
			}
		}
		rep.Lost = mergeLost(rep.Lost, sessionsLost)
		if e, ok := cur[sessions.ConfigFile]; !ok || s.configOK(ctx, e.sha) != nil {
			if le, ok := lostTree[sessions.ConfigFile]; ok {
				cur[sessions.ConfigFile] = le
			}
		}
	}
	shas, err := s.hashObjects(ctx, logContent)
	if err != nil {
		return "", rep, err
	}
	cur[sessions.EventLogFile] = entry{mode: "100644", sha: shas[0]}
	var info strings.Builder
	for p, e := range cur {
		fmt.Fprintf(&info, "%s %s\t%s\n", e.mode, e.sha, p)
	}
	index := []string{"GIT_INDEX_FILE=" + filepath.Join(s.dir, fmt.Sprintf("index.repair.%d", os.Getpid()))}
	defer os.Remove(strings.TrimPrefix(index[0], "GIT_INDEX_FILE="))
	if _, err := s.Repo.RunIn(ctx, nil, index, "read-tree", "--empty"); err != nil {
		return "", rep, err
	}
	if _, err := s.Repo.RunIn(ctx, []byte(info.String()), index, "update-index", "--add", "--index-info"); err != nil {
		return "", rep, err
	}
	treeSha, err := s.Repo.RunIn(ctx, nil, index, "write-tree")
	if err != nil {
		return "", rep, err
	}
	msg := fmt.Sprintf("pickup: repair: replay the transitions of %d session(s) that a rewrite of the board branch lost\n", len(rep.Lost))
	if len(rep.Conflicts) > 0 {
		msg += "\n" + strings.Join(rep.Conflicts, "\n") + "\n"
	}
	args := []string{"commit-tree", strings.TrimSpace(treeSha), "-m", msg, "-p", tip}
	for _, l := range lost {
		args = append(args, "-p", l)
	}
	commit, err := s.Repo.RunIn(ctx, nil, identity, args...)
	if err != nil {
		return "", rep, err
	}
	return strings.TrimSpace(commit), rep, nil
}

// resolve chooses between a session's place in the lost history (l) and
// on the remote (r) when both moved it: whether to take l, and why.
func resolve(l, r place) (bool, string) {
	finished := func(p place) bool { return p.state == sessions.Done || p.state == sessions.Failed }
	switch {
	case finished(r):
		return false, "kept finished"
	case finished(l):
		return true, "finished in the lost history: it stays finished (a claim made since loses it)"
	case l.state == sessions.Doing && r.state == sessions.Todo:
		return true, "the lost claim is put back"
	case r.state == sessions.Doing:
		return false, "the claim made since stands (" + r.owner + "); the lost one (" + l.owner + ") is gone: its done exits 6"
	}
	return false, "kept as the remote has it"
}

// configOK checks a config.yaml blob of the board branch.
func (s *Board) configOK(ctx context.Context, sha string) error {
	blobs, err := s.Repo.CatBlobs(ctx, sha)
	if err != nil {
		return err
	}
	return s.checkFetchedConfig(blobs[sha], true)
}

// putBack puts every session that the board here has elsewhere than the
// remote's tip where the remote has it (a move that never reached the
// remote: its process was killed before it queued it), and returns them.
// Sessions the remote does not have at all are left (Join adds them).
func (s *Board) putBack(ctx context.Context) ([]Difference, error) {
	diffs, err := s.InLine(ctx)
	if err != nil || len(diffs) == 0 {
		return nil, err
	}
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	diffs, err = s.differences(ctx)
	if err != nil {
		return nil, err
	}
	t, err := s.lsTree(ctx, s.readRef(ctx, refBoard))
	if err != nil {
		return nil, err
	}
	var done []Difference
	for _, d := range diffs {
		if d.Remote == "" {
			continue
		}
		cur, _ := t.find(d.ID)
		blobs, err := s.Repo.CatBlobs(ctx, t[cur.path].sha)
		if err != nil {
			return done, err
		}
		if err := s.place(cur.path, blobs[t[cur.path].sha], true); err != nil {
			return done, err
		}
		for _, h := range d.Here {
			if p := h + "/" + d.ID + ".md"; p != cur.path {
				s.setAside(p, blobs[t[cur.path].sha])
			}
		}
		done = append(done, d)
	}
	return done, nil
}

// setAside removes the board's copy at rel, which the remote does not
// have there: a copy identical to the remote's (kept) is removed, one
// that differs goes to conflicts/ (never deleted).
func (s *Board) setAside(rel string, kept []byte) {
	data, err := os.ReadFile(s.abs(rel))
	if err != nil {
		return
	}
	if bytes.Equal(data, kept) {
		_ = os.Remove(s.abs(rel))
		return
	}
	if s.B.CheckDir(sessions.ConflictsDirName) != nil {
		return
	}
	dir := filepath.Join(s.B.Dir, sessions.ConflictsDirName)
	_ = os.MkdirAll(dir, 0o755)
	name := strings.ReplaceAll(rel, "/", "_")
	_ = os.Rename(s.abs(rel), filepath.Join(dir, fmt.Sprintf("%s.repair-%d", name, os.Getpid())))
}
