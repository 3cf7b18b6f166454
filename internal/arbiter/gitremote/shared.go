// Package gitremote makes a board shared by many clones of one repository:
// its history lives on a branch of its own on a git remote (default
// "pickup"), and every transition stands only once a commit that makes
// it is on that branch. The remote's ref update is the compare-and-swap:
// a push that is not a fast-forward of what the remote has is refused, so
// of any number of clones that move one session, exactly one wins.
//
// The board directory of each clone is a checkout of that branch that
// pickup keeps itself: a transition renames there first (which settles
// racers inside one clone), then builds a commit on the last fetched tip
// with plumbing and a private index under the git directory, and pushes
// it. A refused push fetches the branch and looks where the remote has
// the session: moved by someone else, the transition lost and the local
// move is undone; untouched, the move is replayed on the new tip and
// pushed again, with backoff and jitter. A remote that cannot be reached,
// or that refuses the push for another reason (permissions, a protected
// branch, a hook), undoes the local move too and fails with ErrRemote:
// never a silent local-only claim.
//
// Nothing here touches the user's HEAD, index, branches or staged files:
// pickup writes objects, refs under refs/pickup/ and files under
// <git dir>/pickup/ only.
package gitremote

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/boardhook"
	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/internal/idsuffix"
	"github.com/pickup-dev/pickup/sessions"
	"golang.org/x/sys/unix"
)

// Defaults.
const (
	DefaultBranch = "pickup"
	DefaultFetch  = 10 * time.Second
	// DefaultAttempts bounds the pushes in a row that the remote refuses
	// because others pushed first (with the pauses, minutes of a busy
	// remote: a refusal is the normal outcome of contention, not an error).
	DefaultAttempts = 1000
)

// Refs in the local repository (never branches: git branch does not list
// them, and no checkout moves them).
const (
	refBoard   = "refs/pickup/board"   // the remote tip the board directory shows
	refFetched = "refs/pickup/fetched" // the remote tip last fetched
	refPeers   = "refs/pickup/peers/"  // other owners' heartbeat refs, fetched
	ownersRef  = "refs/pickup/owners/" // on the remote: one heartbeat ref per owner
	// tipsRef, on the remote: refs/pickup/tips/<branch>, the last tip
	// pickup pushed to the board branch, moved with it in one atomic
	// push. A person who force-pushes or deletes the branch leaves it
	// behind, so that every clone, even one that never saw the lost
	// commits, notices (see forward.go). refWitness is where a clone
	// fetches them.
	tipsRef    = "refs/pickup/tips/"
	refWitness = "refs/pickup/witness/"
)

// ErrRemote: the remote could not be reached, or refused the push for a
// reason other than a race (permissions, a protected branch, a hook).
// Nothing moved locally. It comes as a *RemoteError.
var ErrRemote = arbiter.ErrRemote

// ErrNoBoardBranch: the remote has no board branch yet.
var ErrNoBoardBranch = errors.New("the remote has no board branch")

// RemoteError says which remote failed, doing what, and how to fix it.
type RemoteError struct {
	Remote, Branch, Op string
	Err                error
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("%s: remote %s (branch %s): %v", e.Op, e.Remote, e.Branch, summary(e.Err))
}

// Unwrap gives ErrRemote only: the git command's own error (and its exit
// status, which is not pickup's) stays out of errors.As.
func (e *RemoteError) Unwrap() error { return ErrRemote }

// Hint says what to do.
func (e *RemoteError) Hint() string {
	if errors.Is(e.Err, errBusy) {
		return "nothing was moved on this board; other clones kept pushing first (a very busy board, or a clone whose pushes loop): run the command again in a moment"
	}
	if errors.Is(e.Err, gitx.ErrNetTimeout) {
		return fmt.Sprintf("the remote stopped answering (a dead VPN, a hung proxy or server?) and pickup gave up at its network deadline; this clone's board is left as the remote had it when last heard from (a push cut off at the deadline may still have landed: once the remote answers, `pickup list --mine` shows what this owner holds); check that `git fetch %s` answers from this clone, then run the command again (network_timeout: in config.yaml, or $PICKUP_NETWORK_TIMEOUT, sets the deadline)",
			e.Remote)
	}
	if localWriteFailed(e.Err) {
		return "nothing was moved on this board; git could not write a file in this clone's git directory (a full disk that has since been freed, or permissions): check free space and that the clone's .git is writable, then run the command again"
	}
	return fmt.Sprintf("nothing was moved on this board; check that `git fetch %s` and `git push %s %s` work from this clone (network, credentials, write access; the branch %s must not be protected nor guarded by a hook that refuses pickup's commits), then run the command again",
		e.Remote, e.Remote, e.Branch, e.Branch)
}

// errBusy: the remote refused a transition's pushes Attempts times in a
// row because other clones pushed first.
var errBusy = errors.New("the board branch kept moving")

// busyError is the refusal loop's bound reached.
type busyError struct {
	n    int
	last string
}

func (e *busyError) Error() string {
	return fmt.Sprintf("gave up after the remote refused %d pushes in a row because other clones pushed first (last: %s)", e.n, e.last)
}

func (e *busyError) Unwrap() error { return errBusy }

// timeoutText is a network timeout that another process of the clone met
// (read back from the queue): its text, and ErrNetTimeout.
type timeoutText struct{ text string }

func (e *timeoutText) Error() string { return e.text }
func (e *timeoutText) Unwrap() error { return gitx.ErrNetTimeout }

// isNetTimeout reports whether err is a remote that stopped answering.
func isNetTimeout(err error) bool {
	var re *RemoteError
	if errors.As(err, &re) {
		err = re.Err
	}
	return errors.Is(err, gitx.ErrNetTimeout)
}

func summary(err error) string {
	var ge *gitx.Error
	if errors.As(err, &ge) {
		return ge.Summary()
	}
	return err.Error()
}

// Board is a board shared through a git remote.
type Board struct {
	B      *sessions.Board
	Repo   *gitx.Repo
	Remote string
	Branch string
	// ClonesDir is where the clones of this machine register
	// (DefaultClonesDir if ""); see clones.go.
	ClonesDir string
	// remoteURL is the remote's URL as this clone registered it.
	remoteURL string
	// Attempts bounds the pushes of one transition (DefaultAttempts).
	Attempts int
	// LockWait bounds a wait for the clone's lock (0: see lockWait).
	LockWait time.Duration
	// Sleep and Rand are for the backoff between refused pushes (tests
	// replace them).
	Sleep func(time.Duration)
	Rand  func() float64
	// Host is this machine's name, written into each heartbeat so that
	// other clones can tell where an owner works (pickup board shows it).
	Host string
	// Leases are this machine's lease records, where the board records
	// what it learns of owners elsewhere (reaps in other clones fence
	// the reaped owner here; heartbeats renew its lease); nil records
	// nothing. internal/leasebook makes them.
	Leases arbiter.Leases

	dir string // <git common dir>/pickup
	// acceptConfig: apply takes a fetched config.yaml whatever it says
	// (Follow: a person confirmed it).
	acceptConfig bool
	// mu makes the goroutines of this process take turns (pickup work's
	// workers share a Board); the flock, the processes of the clone.
	mu sync.Mutex
}

// Open prepares the shared board of b on remote (branch "" is
// DefaultBranch). It sets b's arbiter and id suffix (internal/boardhook). It runs git once (to
// find the repository) and touches nothing.
func Open(ctx context.Context, b *sessions.Board, remote, branch string) (*Board, error) {
	repo, err := gitx.Find(ctx, b.Dir)
	if err != nil {
		return nil, fmt.Errorf("shared board: %w", err)
	}
	if branch == "" {
		branch = DefaultBranch
	}
	s := &Board{B: b, Repo: repo, Remote: remote, Branch: branch, dir: filepath.Join(repo.CommonDir, "pickup")}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, fmt.Errorf("shared board: %w", err)
	}
	suffix, err := s.idSuffix()
	if err != nil {
		return nil, err
	}
	boardhook.SetIDSuffix(b, suffix)
	boardhook.SetArbiter(b, s.Publish)
	s.register(ctx) // clones.go
	boardhook.SetHeard(b, s.HeardHolders)
	return s, nil
}

// idSuffix is this clone's id suffix, made once and kept in the git
// directory (a clone of a clone gets its own: the git directory is not
// cloned).
func (s *Board) idSuffix() (string, error) {
	path := filepath.Join(s.dir, "id-suffix")
	if data, err := fsx.ReadRegular(path); err == nil {
		if v := strings.TrimSpace(string(data)); idsuffix.Valid(v) {
			return v, nil
		}
	}
	random := make([]byte, idsuffix.Len)
	_, _ = rand.Read(random)
	v, err := idsuffix.New(random)
	if err != nil {
		return "", err
	}
	if err := fsx.WriteNew(path, []byte(v+"\n"), 0o644, true); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("shared board: id suffix: %w", err)
	}
	// Another process may have written one first: use the one kept.
	if data, err := fsx.ReadRegular(path); err == nil {
		if kept := strings.TrimSpace(string(data)); idsuffix.Valid(kept) {
			return kept, nil
		}
	}
	return v, nil
}

// lock takes the clone's lock: the pickup processes of one clone fetch,
// apply and push one at a time, so that the board directory and the refs
// under refs/pickup/ change in step. It waits at most lockWait: every
// holder's round trips end within the network deadline, so a longer
// wait means a holder that is stopped (^Z, SIGSTOP, a debugger) or stuck
// outside pickup's control; the error says which file and for how long.
func (s *Board) lock() (func(), error) {
	s.mu.Lock()
	path := filepath.Join(s.dir, "lock")
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("shared board: lock: %w", err)
	}
	// Try at once: the common case costs no goroutine.
	err = flockEINTR(fd, unix.LOCK_EX|unix.LOCK_NB)
	if err == unix.EWOULDBLOCK {
		// A blocking flock wakes the moment the holder lets go (polling
		// would add its pause to every hand-over); it runs aside so that
		// the wait can be given up.
		got := make(chan error, 1)
		go func() { got <- flockEINTR(fd, unix.LOCK_EX) }()
		wait := s.lockWait()
		t := time.NewTimer(wait)
		select {
		case err = <-got:
			t.Stop()
		case <-t.C:
			go func() {
				<-got
				unix.Close(fd) // got it after all: let it go at once
			}()
			s.mu.Unlock()
			return nil, &LockWaitError{Path: path, Waited: wait}
		}
	}
	if err != nil {
		unix.Close(fd)
		s.mu.Unlock()
		return nil, fmt.Errorf("shared board: lock: %w", err)
	}
	return func() {
		unix.Close(fd) // releases the flock
		s.mu.Unlock()
	}, nil
}

func flockEINTR(fd, how int) error {
	for {
		if err := unix.Flock(fd, how); err != unix.EINTR {
			return err
		}
	}
}

// lockWait bounds a wait for the clone's lock: four network deadlines (a
// lead's round trips share one, its local work takes far less, and a
// waiter may come after a lead or two).
func (s *Board) lockWait() time.Duration {
	if s.LockWait > 0 {
		return s.LockWait
	}
	return 4 * s.Repo.NetTimeoutOf()
}

// LockWaitError: the clone's lock stayed held for the whole wait. It
// matches arbiter.ErrLockTimeout (claim.ErrLockTimeout) (exit 5).
type LockWaitError struct {
	Path   string
	Waited time.Duration
	// Withdrawn: the transition had been undone here and taken out of the
	// queue (nothing moved); Queued: it could not be, and stays queued.
	Withdrawn, Queued bool
}

func (e *LockWaitError) Error() string {
	msg := fmt.Sprintf("shared board: another pickup process of this clone held %s for the whole %s wait", e.Path, e.Waited.Round(time.Second))
	switch {
	case e.Withdrawn:
		msg += "; the transition was undone and taken out of the queue: nothing moved"
	case e.Queued:
		msg += "; the transition stays queued: the next pickup command of this clone pushes it or undoes it"
	}
	return msg
}

func (e *LockWaitError) Unwrap() error { return arbiter.ErrLockTimeout }

// Hint says what to do.
func (e *LockWaitError) Hint() string {
	return fmt.Sprintf("every pickup process gives the lock up within its network deadline, so its holder is probably stopped (^Z, SIGSTOP, a debugger): look for it with `fuser -v %s` or `ps`, let it continue or end it, then run the command again; do not delete the lock file", e.Path)
}

func (s *Board) remoteErr(op string, err error) error {
	return &RemoteError{Remote: s.Remote, Branch: s.Branch, Op: op, Err: err}
}

func (s *Board) sleep(d time.Duration) {
	if s.Sleep != nil {
		s.Sleep(d)
		return
	}
	time.Sleep(d)
}

func (s *Board) rand() float64 {
	if s.Rand != nil {
		return s.Rand()
	}
	var b [2]byte
	_, _ = rand.Read(b[:])
	return float64(int(b[0])<<8|int(b[1])) / 65536
}

// backoff is the pause before retry n (from 1): 2 ms doubling up to 64
// ms, times a jitter in [0.5, 1.5): racers that were refused together
// spread out instead of colliding again. It stays short: the retry has
// just fetched the winner's tip, and a long pause would only hand the
// next round to clones that were not refused (starving this one).
func (s *Board) backoff(n int) time.Duration {
	d := 2 * time.Millisecond
	for i := 1; i < n && d < 64*time.Millisecond; i++ {
		d *= 2
	}
	d = min(d, 64*time.Millisecond)
	return time.Duration(float64(d) * (0.5 + s.rand()))
}
