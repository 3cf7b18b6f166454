package gitremote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// Clones of one machine. Several clones of one repository on one machine
// (a worktree per agent, a checkout per project folder) share a board
// through the remote, and an owner that works in one of them is judged in
// the others by its heartbeat only: the remote carries no process ids.
// But the clones share the machine, and so its process table: each clone
// registers its board in a directory of the machine's (ClonesDir: the
// user's runtime directory), and a clone that judges an owner without a
// lease of its own reads the owner's lease in the other registered clones
// of the same remote and branch (HeardHolders), so that claim.Leases
// judges it by its processes, as its own clone does: a killed agent's
// sessions come back at once from any clone of its machine, and a live
// one's are never taken.
//
// Only a lease that its clone renewed within the stale period speaks for
// its owner here: an old lease of an owner that has since moved to
// another machine would call it dead while its heartbeats say otherwise
// (such an owner is judged by its heartbeat, as before).
//
// Limits: clones of another user (another runtime directory), and clones
// that name the remote by another URL, are not seen, and judge the owner
// by its heartbeat as before (in doubt, a claim stays). A registered clone
// that was deleted is skipped.

// defaultStale is claim.DefaultStale (which this package cannot import):
// the stale period of a board whose config.yaml sets none.
const defaultStale = 30 * time.Minute

// cloneEntry is a clone's registration.
type cloneEntry struct {
	Board  string `json:"board"` // the board directory
	Remote string `json:"remote"`
	Branch string `json:"branch"`
}

// DefaultClonesDir is where the clones of this machine register:
// $XDG_RUNTIME_DIR/pickup/clones, else pickup-<uid>/clones in the
// temporary directory.
func DefaultClonesDir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "pickup", "clones")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("pickup-%d", os.Getuid()), "clones")
}

func (s *Board) clonesDir() string {
	if s.ClonesDir != "" {
		return s.ClonesDir
	}
	return DefaultClonesDir()
}

// The registry has two folders: by-board/<hash of the board directory>
// says which remote and branch a clone registered with (one read at each
// command), and by-remote/<hash of remote and branch>/ holds the clones
// of each board, so that a clone reads only those of its own.

// entryPath is the registration of the board at dir.
func (s *Board) entryPath(dir string) string {
	return filepath.Join(s.clonesDir(), "by-board", digest(dir)+".json")
}

// peersDir is the folder of the clones of remote url and branch.
func peersDir(clonesDir, url, branch string) string {
	return filepath.Join(clonesDir, "by-remote", digest(url+"\x00"+branch))
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:12])
}

// register records this clone in the machine's directory, once (one
// read after that). A failure only leaves the clone unseen by the others.
func (s *Board) register(ctx context.Context) {
	path := s.entryPath(s.B.Dir)
	if e, ok := readEntry(path); ok && e.Board == s.B.Dir && e.Branch == s.Branch {
		s.remoteURL = e.Remote
		return
	}
	url := s.Remote
	if out, err := s.Repo.Run(ctx, "config", "--get", "remote."+s.Remote+".url"); err == nil && strings.TrimSpace(out) != "" {
		url = strings.TrimSpace(out)
	}
	s.remoteURL = url
	_ = s.writeEntry(url)
}

// writeEntry registers this clone as a clone of url.
func (s *Board) writeEntry(url string) error {
	data, err := json.Marshal(cloneEntry{Board: s.B.Dir, Remote: url, Branch: s.Branch})
	if err != nil {
		return err
	}
	peer := filepath.Join(peersDir(s.clonesDir(), url, s.Branch), digest(s.B.Dir)+".json")
	for _, p := range []string{peer, s.entryPath(s.B.Dir)} { // the peer entry first: by-board says it is done
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := fsx.WriteReplace(p, data, 0o600, false); err != nil {
			return err
		}
	}
	return nil
}

func readEntry(path string) (cloneEntry, bool) {
	var e cloneEntry
	data, err := fsx.ReadRegular(path)
	if err != nil || json.Unmarshal(data, &e) != nil || e.Board == "" {
		return cloneEntry{}, false
	}
	return e, true
}

// HeardHolders is the processes of owner's leases in the other clones of
// this machine that share this board (same remote URL and branch): see
// above. It reads a few small files and runs no git.
func (s *Board) HeardHolders(owner string) []proc.Process {
	return heardHolders(s.clonesDir(), s.B, s.remoteURL, s.Branch, owner)
}

// ViewHolders is HeardHolders for a board read without its arbiter (pickup
// status on a git-shared board, which does not fetch): b must be a clone
// that registered (any command that moved sessions in it did), else it
// returns nil. clonesDir "" is DefaultClonesDir.
func ViewHolders(b *sessions.Board, clonesDir string) func(owner string) []proc.Process {
	if clonesDir == "" {
		clonesDir = DefaultClonesDir()
	}
	s := &Board{B: b, ClonesDir: clonesDir}
	e, ok := readEntry(s.entryPath(b.Dir))
	if !ok || e.Board != b.Dir {
		return nil
	}
	return func(owner string) []proc.Process { return heardHolders(clonesDir, b, e.Remote, e.Branch, owner) }
}

func heardHolders(clonesDir string, b *sessions.Board, url, branch, owner string) []proc.Process {
	if url == "" || sessions.ValidateOwner(owner) != nil {
		return nil
	}
	dir := peersDir(clonesDir, url, branch)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	stale := defaultStale
	if cfg, err := b.Config(); err == nil && cfg.Stale > 0 {
		stale = cfg.Stale
	}
	now := time.Now()
	var holders []proc.Process
	for _, de := range entries {
		path := filepath.Join(dir, de.Name())
		e, ok := readEntry(path)
		if !ok || e.Board == b.Dir || e.Remote != url || e.Branch != branch {
			continue
		}
		if _, err := os.Stat(e.Board); errors.Is(err, fs.ErrNotExist) {
			_ = os.Remove(path) // a clone deleted since: forget it
			continue
		}
		other := &sessions.Board{Dir: e.Board}
		data, err := fsx.ReadRegular(filepath.Join(other.RuntimeDir(), "leases", owner+".json"))
		if err != nil {
			continue
		}
		var lease struct {
			Holders   []proc.Process `json:"holders"`
			Process   *proc.Process  `json:"process"` // a lease written before holders
			Heartbeat time.Time      `json:"heartbeat_at"`
		}
		if json.Unmarshal(data, &lease) != nil || now.Sub(lease.Heartbeat) >= stale {
			continue
		}
		holders = append(holders, lease.Holders...)
		if lease.Process != nil {
			holders = append(holders, *lease.Process)
		}
	}
	return holders
}
