package sharedways

import (
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/testbound"
)

// silentRemote listens where the git daemon did and accepts every
// connection without ever answering: a dead VPN, a hung proxy. It notes
// when each connection came and when its client gave it up (closed it).
type silentRemote struct {
	l     net.Listener
	mu    sync.Mutex
	conns []*heldConn
	done  chan struct{}
}

// heldConn is one connection to the silent remote: accepted at from, given
// up by its client at to (zero while it holds it).
type heldConn struct {
	c        net.Conn
	from, to time.Time
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
			h := &heldConn{c: c, from: time.Now()}
			s.mu.Lock()
			s.conns = append(s.conns, h)
			s.mu.Unlock()
			go func() {
				// Whatever the client sends is read and never answered;
				// the read ends when the client closes its end (or kill
				// closes ours).
				_, _ = io.Copy(io.Discard, c)
				s.mu.Lock()
				if h.to.IsZero() {
					h.to = time.Now()
				}
				s.mu.Unlock()
			}()
		}
	}()
	t.Cleanup(func() { s.kill() })
	return s
}

// kill stops listening and drops every connection it held (the
// connections' clients see them closed). It returns how long each
// connection was held by its client; one still held is held until now.
func (s *silentRemote) kill() []time.Duration {
	s.l.Close()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	var held []time.Duration
	for _, h := range s.conns {
		if h.to.IsZero() {
			h.to = now
		}
		held = append(held, h.to.Sub(h.from))
		h.c.Close()
	}
	s.conns = nil
	return held
}

// held is how many connections it accepted.
func (s *silentRemote) held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// TestWorldSilentRemote: two clones, each drained by a bash agent script
// with two subshells, against a git daemon. Mid-drain the daemon is
// killed and a listener that accepts connections and never answers takes
// its port (pushes and fetches under way or started then hang there);
// after a while that listener is killed and the daemon restarted. With a
// network deadline of 2 s, no pickup call waits on the silent remote past
// its deadline (the evidence: every connection to the silent remote is
// given up by its client well before the silence ends), the calls that
// met the silence exit 8, and the drain finishes: every session claimed
// once, finished once, in done/ on the remote and alike in every clone.
//
// The bound is on the connections, not on whole calls: once the remote
// answers again, a call of a clone may lose several pushes in a row to
// the other clone (each round trip bounded by the deadline, the board
// moving all along), and how long that lasts depends on the machine.
func TestWorldSilentRemote(t *testing.T) {
	t.Parallel()
	// A connection is given up at the deadline (the call's process group
	// gets SIGTERM, and SIGKILL 2 s later), and the relay gives up a
	// transfer that moved no bytes for the deadline: held is 4 s at most
	// on an idle machine. stuck leaves room for one 4 times slower. The
	// silence lasts longer than stuck, so that a call without a deadline
	// is seen holding its connection. hard only stops a call that never
	// ends, so that the test does.
	const deadline, stuck, silence, hard = 2 * time.Second, 16 * time.Second, 24 * time.Second, 120 * time.Second
	// The scenario is bounded from the agents' last call, not from its
	// start: on a busy machine the calls after the silence lose many
	// pushes to their 2 s deadline before the drain ends (seen under a
	// load of 30 on 2 cores: 10 of 12 done after a fixed 5 minutes).
	bound := testbound.New(t, 0)
	ctx := bound.Context()
	r := newRemote(t, "daemon")
	cs := r.clones(2)
	ids := createFromAll(t, cs, 6)
	w := startAgents(ctx, t, r, cs, 2, hard, fmt.Sprintf("PICKUP_NETWORK_TIMEOUT=%s", deadline))
	w.observe(bound)

	if !waitFor(ctx, func() bool { return doneOnRemote(r) >= 2 }) {
		t.Fatal("the drain did not start")
	}
	r.daemon.stop()
	silentFrom := time.Now()
	silent := listenSilent(t, r.daemon.port)
	time.Sleep(silence)
	n := silent.held()
	held := silent.kill()
	r.daemon.start()

	logs, calls := w.wait()
	total, hung, remote, longest := callStats(calls)
	slices.Sort(held)
	t.Logf("%d pickup calls, %d exited 8, %d stopped at %s; the silent remote had %d connections, held by their clients for %v; longest call: %v",
		total, remote, hung, hard, n, roundAll(held), longest)
	for _, c := range calls {
		if c.took > deadline+deadline/2 {
			t.Logf("long call: %s exit %d took %s, from %.1fs after the remote went silent", c.cmd, c.code, c.took.Round(time.Millisecond), c.start.Sub(silentFrom).Seconds())
		}
	}
	if n == 0 {
		t.Fatal("no agent met the silent remote: the scenario did not happen")
	}
	if len(held) > 0 && held[len(held)-1] > stuck {
		t.Errorf("a pickup call waited on the silent remote for %s with a network deadline of %s (bound %s)\n%s", held[len(held)-1].Round(time.Millisecond), deadline, stuck, w.stderr())
	}
	if hung > 0 {
		t.Errorf("%d pickup calls did not end within %s\n%s", hung, hard, w.stderr())
	}
	if remote == 0 {
		t.Errorf("no call exited 8 while the remote was silent\n%s", w.stderr())
	}
	checkDrained(t, r, cs, ids, logs)
	if os.Getenv("SHAREDWAYS_VERBOSE") != "" {
		t.Logf("the agents' stderr:\n%s", w.stderr())
	}
}

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(100 * time.Millisecond)
	}
	return out
}
