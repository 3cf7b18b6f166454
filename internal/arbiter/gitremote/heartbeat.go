package gitremote

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/internal/beatmark"
	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/sessions"
)

// Heartbeats across clones. Each owner has a ref on the remote,
// refs/pickup/owners/<owner>, that only that owner moves (a force push of
// a tiny commit, at most once per interval): no commit on the board
// branch per heartbeat. Other clones fetch those refs with the branch and
// judge an owner by when THEY saw its ref change, by their own clock, so
// that the machines' clocks need not agree; they never look at another
// machine's pids. Seeing a change renews the owner's lease here (a lease
// without processes, which reap judges by its heartbeat only); its own
// machine keeps judging it by its processes.

var pushRejected = gitx.PushRejected

// emptyTree is git's empty tree, which every repository has.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// beatKind is the folder of the runtime directory where this clone marks
// its last push of each owner's heartbeat (package beatmark).
const beatKind = "shared-beats"

// BeatDue reports whether owner's last heartbeat push from the clone of
// boardDir is older than every (or never happened): one stat, no git.
func BeatDue(boardDir, owner string, every time.Duration, now time.Time) bool {
	return beatmark.Due(boardDir, beatKind, owner, every, now)
}

// Heartbeat pushes owner's heartbeat ref if the last push from this
// clone is older than every (0: push now). It reports whether it pushed.
func (s *Board) Heartbeat(ctx context.Context, owner string, every time.Duration) (bool, error) {
	if err := sessions.ValidateOwner(owner); err != nil {
		return false, err
	}
	if !BeatDue(s.B.Dir, owner, every, time.Now()) {
		return false, nil
	}
	msg := fmt.Sprintf("pickup: heartbeat %s %s", owner, time.Now().UTC().Format(time.RFC3339Nano))
	if s.Host != "" {
		msg += " on " + s.Host
	}
	var commit string
	var err error
	if s.Repo.ObjectsInProcess() {
		if _, err = s.Repo.WriteObject("tree", nil); err == nil {
			commit, err = s.Repo.WriteObject("commit", commitBody(emptyTree, "", msg, time.Now()))
		}
	} else {
		commit, err = s.Repo.RunIn(ctx, nil, identity, "commit-tree", emptyTree, "-m", msg)
	}
	if err != nil {
		return false, s.remoteErr("heartbeat", err)
	}
	if _, err := s.Repo.Run(ctx, "push", "--quiet", "--no-verify", "--force", s.Remote, strings.TrimSpace(commit)+":"+ownersRef+owner); err != nil {
		return false, s.remoteErr("heartbeat", err)
	}
	beatmark.Mark(s.B.Dir, beatKind, owner)
	return true, nil
}

// PeerHosts returns, for each owner of another clone whose heartbeat
// this clone has seen, the machine that heartbeat came from (as that
// machine named itself; owners whose pickup wrote no host are left out).
// It reads the heartbeat commits that the last fetches brought (their
// refs are dropped after each fetch, the objects stay), with one git
// process; it fetches nothing. Only the live board asks: no transition
// pays for it.
func (s *Board) PeerHosts(ctx context.Context) (map[string]string, error) {
	seen := map[string]peerSeen{}
	if data, err := fsx.ReadRegular(filepath.Join(s.dir, "peers.json")); err == nil {
		_ = json.Unmarshal(data, &seen)
	}
	args := []string{"log", "--no-walk=unsorted", "--format=%H%x00%s"}
	for _, p := range seen {
		if isHash(p.Commit) {
			args = append(args, p.Commit)
		}
	}
	if len(args) == 3 {
		return map[string]string{}, nil
	}
	out, err := s.Repo.Run(ctx, args...)
	if err != nil {
		return nil, err
	}
	return peerHosts(seen, out), nil
}

// isHash reports whether h is a full object name (hex), so that nothing
// read from peers.json is taken by git for an option.
func isHash(h string) bool {
	if len(h) != 40 && len(h) != 64 {
		return false
	}
	for _, c := range h {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// peerHosts reads git log's "<commit>\x00<subject>" lines for the owners
// of seen.
func peerHosts(seen map[string]peerSeen, out string) map[string]string {
	subjects := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if commit, subject, ok := strings.Cut(line, "\x00"); ok {
			subjects[commit] = subject
		}
	}
	hosts := map[string]string{}
	for owner, p := range seen {
		subject := subjects[p.Commit]
		if _, host, ok := strings.Cut(subject, " on "); ok && host != "" && strings.HasPrefix(subject, "pickup: heartbeat "+owner+" ") {
			hosts[owner] = host
		}
	}
	return hosts
}

// peerSeen is what this clone knows of another owner's heartbeat ref.
type peerSeen struct {
	Commit string    `json:"commit"`
	Seen   time.Time `json:"seen"` // by this clone's clock
}

// seePeers notes the owners whose heartbeat refs changed since the last
// fetch, and renews their leases here. Owners with a process on this
// machine are left alone: their processes speak for them.
func (s *Board) seePeers(refs map[string]string) {
	path := filepath.Join(s.dir, "peers.json")
	seen := map[string]peerSeen{}
	if data, err := fsx.ReadRegular(path); err == nil {
		_ = json.Unmarshal(data, &seen)
	}
	changed := false
	now := time.Now().UTC()
	for ref, commit := range refs {
		owner, ok := strings.CutPrefix(ref, refPeers)
		if !ok || sessions.ValidateOwner(owner) != nil || seen[owner].Commit == commit {
			continue
		}
		seen[owner] = peerSeen{Commit: commit, Seen: now}
		changed = true
		if s.Leases == nil {
			continue
		}
		if held, err := s.Leases.HeldHere(owner); err != nil || held {
			continue // an owner of this machine (or its lease unreadable)
		}
		_ = s.Leases.Renew(owner)
	}
	if !changed {
		return
	}
	if data, err := json.Marshal(seen); err == nil {
		tmp := path + fmt.Sprintf(".%d", os.Getpid())
		if os.WriteFile(tmp, data, 0o644) == nil {
			_ = os.Rename(tmp, path)
		}
	}
}
