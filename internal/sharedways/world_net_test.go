package sharedways

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

// silentRemote listens where the git daemon did and accepts every
// connection without ever answering: a dead VPN, a hung proxy.
type silentRemote struct {
	l     net.Listener
	mu    sync.Mutex
	conns []net.Conn
	done  chan struct{}
}

func listenSilent(t testing.TB, port int) *silentRemote {
	t.Helper()
	var l net.Listener
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; {
		if l, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("listen on the daemon's port %d: %v", port, err)
	}
	s := &silentRemote{l: l, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
		}
	}()
	t.Cleanup(s.kill)
	return s
}

// kill stops listening and drops every connection it held (the
// connections' clients see them closed).
func (s *silentRemote) kill() {
	s.l.Close()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.Close()
	}
	s.conns = nil
}

// held is how many connections it accepted and holds.
func (s *silentRemote) held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// TestWorldSilentRemote: two clones, each drained by a bash agent script
// with two subshells, against a git daemon. Mid-drain the daemon is
// killed and a listener that accepts connections and never answers takes
// its port (pushes and fetches under way or started then hang there);
// a few seconds later that listener is killed and the daemon restarted.
// With a network deadline of 2 s, no pickup call hangs (each is stopped
// at 12 s and counted; the silence lasts 13 s), the calls that met the silence exit 8, and the drain
// finishes: every session claimed once, finished once, in done/ on the
// remote and alike in every clone.
func TestWorldSilentRemote(t *testing.T) {
	t.Parallel()
	// Each call is stopped at hard, 6 times the deadline: a call may
	// fetch and then push, and right after the remote comes back a clone
	// may lose several pushes in a row to the other (seen: 8 s of refused
	// pushes under load, each one bounded). The remote stays silent for
	// longer than hard, so that a call without a deadline is stopped, and
	// counted.
	const deadline, hard, silence = 2 * time.Second, 12 * time.Second, 13 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r := newRemote(t, "daemon")
	cs := r.clones(2)
	ids := createFromAll(t, cs, 6)
	w := startAgents(ctx, t, r, cs, 2, hard, fmt.Sprintf("PICKUP_NETWORK_TIMEOUT=%s", deadline))

	if !waitFor(ctx, func() bool { return doneOnRemote(r) >= 2 }) {
		t.Fatal("the drain did not start")
	}
	r.daemon.stop()
	silentFrom := time.Now()
	silent := listenSilent(t, r.daemon.port)
	time.Sleep(silence)
	held := silent.held()
	silent.kill()
	r.daemon.start()

	logs, calls := w.wait()
	n, hung, remote, longest := callStats(calls)
	t.Logf("%d pickup calls, %d hung (killed at %s), %d exited 8; the silent remote held %d connections; longest call: %v",
		n, hung, hard, remote, held, longest)
	for _, c := range calls {
		if c.took > deadline+deadline/2 {
			t.Logf("long call: %s exit %d took %s, from %.1fs after the remote went silent", c.cmd, c.code, c.took.Round(time.Millisecond), c.start.Sub(silentFrom).Seconds())
		}
	}
	if held == 0 {
		t.Fatal("no agent met the silent remote: the scenario did not happen")
	}
	if hung > 0 {
		t.Errorf("%d pickup calls hung past %s with a network deadline of %s\n%s", hung, hard, deadline, w.stderr())
	}
	if remote == 0 {
		t.Errorf("no call exited 8 while the remote was silent\n%s", w.stderr())
	}
	checkDrained(t, r, cs, ids, logs)
	if os.Getenv("SHAREDWAYS_VERBOSE") != "" {
		t.Logf("the agents' stderr:\n%s", w.stderr())
	}
}
