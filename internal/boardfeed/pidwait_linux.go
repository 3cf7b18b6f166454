package boardfeed

import (
	"fmt"
	"time"

	"github.com/pickup-dev/pickup/internal/proc"
	"golang.org/x/sys/unix"
)

// pidWait calls exited once p exits, however long that takes, at no cost
// meanwhile: a goroutine blocks in poll(2) on a pidfd of p, which the
// kernel makes readable when p exits. It reports whether p's exit is
// awaited for what (an owner's name, "" for the locks): now, or already
// by an earlier call. A p that does not run here (gone already, of
// another host or pid namespace) is not awaited: it has no exit to come.
//
// Its caller judges after it, never before: an exit after the pidfd is
// open wakes the poller, however the judgment that follows saw p, and one
// before it is seen by that judgment. A judgment made first, with the
// wait set up after, misses an exit in between (it says alive, and p is
// gone by the time its pidfd would be opened).
func (l *live) pidWait(what string, p proc.Process, exited func()) bool {
	key := fmt.Sprintf("%q %s/%d/%d/%d", what, p.BootID, p.PidNS, p.PID, p.Start)
	l.f.mu.Lock()
	if l.waited[key] {
		l.f.mu.Unlock()
		return true
	}
	l.waited[key] = true
	l.f.mu.Unlock()
	unmark := func() {
		l.f.mu.Lock()
		delete(l.waited, key)
		l.f.mu.Unlock()
	}
	fd, err := unix.PidfdOpen(p.PID, 0)
	if err != nil {
		unmark()
		if err == unix.ESRCH {
			return false
		}
		// No pidfds here (an old kernel, a seccomp filter): as on other
		// systems, a death is seen at the next change of the board.
		return l.f.sys.Liveness(p, l.f.sys.Self()) == proc.Alive
	}
	// Judged after the open: the pidfd is of the process recorded (not
	// one that reused its pid), and it ran when the pidfd was opened.
	if l.f.sys.Liveness(p, l.f.sys.Self()) != proc.Alive {
		unix.Close(fd)
		unmark()
		return false
	}
	go func() {
		defer unix.Close(fd)
		stop := l.stopFd()
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(stop), Events: unix.POLLIN}}
		for {
			_, err := unix.Poll(fds, -1)
			if err == unix.EINTR {
				continue
			}
			break
		}
		// p exited, or the run ended (the stop pipe hung up), or poll
		// failed: then a judgment again is what is right.
		unmark()
		if l.ctx.Err() == nil {
			exited()
		}
	}()
	return true
}

// startStop makes l.stop, which the pollers of pidWait also wait on: the
// read end of a pipe whose write end closes when l.ctx ends.
func (l *live) startStop() {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		l.stop = -1
		return
	}
	l.stop = p[0]
	go func() { <-l.ctx.Done(); unix.Close(p[1]) }()
}

// changeTime is path's ctime: for a session in doing/, when it was
// renamed there (its claim); zero if it cannot be read.
func changeTime(path string) time.Time {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil {
		return time.Time{}
	}
	return time.Unix(st.Ctim.Unix())
}
