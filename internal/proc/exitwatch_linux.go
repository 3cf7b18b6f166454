package proc

import (
	"sync"

	"golang.org/x/sys/unix"
)

// WatchExits watches the processes of ps that run here, numbered as this
// process numbers them (same host, boot and pid namespace: Liveness says
// Alive, the same judgement a reap makes). A pid means a process only
// together with its start time: after pidfd_open the process is looked up
// again, and a pid that now names another run of the pid (reused) is not
// watched but reported at once, as is one that exited meanwhile.
func (e Env) WatchExits(ps []Process) *ExitWatch {
	if e.procRoot() != "/proc" {
		return &ExitWatch{} // a fake /proc: its pids are not this system's
	}
	local := e.Self()
	var fds []int
	fired := false
	for _, p := range ps {
		if e.Liveness(p, local) != Alive {
			continue
		}
		fd, err := unix.PidfdOpen(p.PID, unix.PIDFD_NONBLOCK)
		if err != nil {
			if err == unix.ESRCH {
				fired = true // exited since Liveness looked
			}
			continue // ENOSYS (an old kernel), EMFILE, ...: the rescan remains
		}
		if st, err := e.stat(p.PID); err != nil || st.zombie || (p.Start != 0 && st.start != p.Start) {
			// Exited, or the pid is another process's already: the fd
			// may watch the wrong one. Let the caller judge now.
			unix.Close(fd)
			fired = true
			continue
		}
		fds = append(fds, fd)
	}
	if len(fds) == 0 && !fired {
		return &ExitWatch{}
	}
	c := make(chan struct{}, 1)
	if fired {
		c <- struct{}{}
		for _, fd := range fds {
			unix.Close(fd)
		}
		return &ExitWatch{C: c, stop: func() {}}
	}
	// A pipe wakes the poller to stop it.
	var pipe [2]int
	if err := unix.Pipe2(pipe[:], unix.O_CLOEXEC); err != nil {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return &ExitWatch{}
	}
	pfds := make([]unix.PollFd, 0, len(fds)+1)
	for _, fd := range fds {
		pfds = append(pfds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	pfds = append(pfds, unix.PollFd{Fd: int32(pipe[0]), Events: unix.POLLIN})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			_, err := unix.Poll(pfds, -1)
			if err == unix.EINTR {
				continue
			}
			if pfds[len(pfds)-1].Revents != 0 {
				return // told to stop
			}
			if err != nil {
				return // cannot poll: the rescan remains
			}
			for _, p := range pfds[:len(pfds)-1] {
				if p.Revents != 0 {
					c <- struct{}{}
					return
				}
			}
		}
	}()
	var once sync.Once
	return &ExitWatch{C: c, stop: func() {
		once.Do(func() {
			_, _ = unix.Write(pipe[1], []byte{0})
			wg.Wait()
			for _, fd := range append(fds, pipe[0], pipe[1]) {
				unix.Close(fd)
			}
		})
	}}
}
