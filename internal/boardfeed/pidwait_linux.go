package boardfeed

import (
	"fmt"
	"time"

	"github.com/pickup-dev/pickup/internal/proc"
	"golang.org/x/sys/unix"
)

// pidWait calls exited once p exits, however long that takes, at no cost
// meanwhile: a goroutine blocks in poll(2) on a pidfd of p, which the
// kernel makes readable when p exits. It does nothing if p is already
// awaited. If p cannot be awaited (gone already, another pid namespace),
// exited runs at once: its caller judges again, which is always right.
func (l *live) pidWait(p proc.Process, exited func()) {
	key := fmt.Sprintf("%s/%d/%d/%d", p.BootID, p.PidNS, p.PID, p.Start)
	l.f.mu.Lock()
	if l.waited[key] {
		l.f.mu.Unlock()
		return
	}
	l.waited[key] = true
	l.f.mu.Unlock()
	done := func() {
		l.f.mu.Lock()
		delete(l.waited, key)
		l.f.mu.Unlock()
		if l.ctx.Err() == nil {
			exited()
		}
	}
	fd, err := unix.PidfdOpen(p.PID, 0)
	if err != nil {
		go done()
		return
	}
	// The pid may have been reused between the judgment and the open:
	// the pidfd must be of the process judged alive.
	if l.f.leases.Proc.Liveness(p, l.f.leases.Proc.Self()) != proc.Alive {
		unix.Close(fd)
		go done()
		return
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
		if fds[0].Revents != 0 {
			done()
		}
	}()
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
