package pgways

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/testbound"
)

// tcpProxy relays connections from a port of its own to the server's, as
// a network between the machines and the database does: while the server
// is down, a connection is accepted and then closed (a reset), not
// refused.
type tcpProxy struct {
	l    net.Listener
	to   string
	mu   sync.Mutex
	open map[net.Conn]bool
}

func startProxy(t *testing.T, to string) *tcpProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{l: l, to: to, open: map[net.Conn]bool{}}
	go p.serve()
	t.Cleanup(p.close)
	return p
}

func (p *tcpProxy) port() int { return p.l.Addr().(*net.TCPAddr).Port }

func (p *tcpProxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		go p.relay(c)
	}
}

func (p *tcpProxy) track(c net.Conn, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.open[c] = true
	} else {
		delete(p.open, c)
	}
}

func (p *tcpProxy) relay(c net.Conn) {
	defer c.Close()
	up, err := net.DialTimeout("tcp", p.to, 5*time.Second)
	if err != nil {
		return // the server is down: the client sees its connection closed
	}
	defer up.Close()
	p.track(c, true)
	p.track(up, true)
	defer p.track(c, false)
	defer p.track(up, false)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
}

func (p *tcpProxy) close() {
	p.l.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.open {
		c.Close()
	}
}

// restartSessions is TestRestartRiddenOver's size: PGWAYS_RESTART_SESSIONS
// (else 100, scaled by PICKUP_TEST_SCALE; 200 was the fault run).
func restartSessions(t *testing.T) int {
	if n, err := strconv.Atoi(os.Getenv("PGWAYS_RESTART_SESSIONS")); err == nil && n > 0 {
		return n
	}
	// 100: the crashes come at a quarter and at half of them, each with
	// 16 agents mid-claim and 50 sessions still to drain after the second
	// (PICKUP_TEST_SCALE=2 is the 200 of the run).
	return testbound.Scaled(t, 100, 40)
}

// restartDeadline is TestRestartRiddenOver's PICKUP_NETWORK_TIMEOUT:
// PGWAYS_RESTART_TIMEOUT (the run: 10s), else a minute, so that
// a restart on a machine many times slower than a quiet one still fits
// in it (on a 2-core machine at load 100, pg_ctl's stop and start took
// 22 s).
func restartDeadline() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("PGWAYS_RESTART_TIMEOUT")); err == nil && d > 0 {
		return d
	}
	return time.Minute
}

// TestRestartRiddenOver is issue 31's fault run: 4 clones × an agent
// script of 4 subshells drain 100 sessions (restartSessions) through a TCP proxy while the
// server is crashed (pg_ctl stop -m immediate) and started again, twice,
// with PICKUP_NETWORK_TIMEOUT at restartDeadline. No command answers exit
// 8 (they retry until the server is back) unless an outage was longer
// than the deadline. The promise holds: each session claimed once, none finished
// twice, none lost, every board agrees. A drain that makes no progress
// for three minutes fails, printing what it saw.
func TestRestartRiddenOver(t *testing.T) {
	db, _ := newDatabase(t)
	proxy := startProxy(t, fmt.Sprintf("127.0.0.1:%d", server.Port))
	// No sslmode: libpq's default, prefer, asks for TLS first, as users'
	// URLs do ("server refused TLS connection" while it starts).
	url := fmt.Sprintf("postgres://pickup@127.0.0.1:%d/%s", proxy.port(), db)
	cs := clones(t, url, 4)
	n := restartSessions(t)
	ids := createFromAll(t, cs, n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	deadline := restartDeadline()
	d := startAgents(t, ctx, cs, 4, "PICKUP_NETWORK_TIMEOUT="+deadline.String())

	// The watchdog: progress is a session done; none for three minutes
	// (a hang, on however slow a machine) stops the agents.
	var hung sync.Once
	var hungMsg string
	stopWatch := make(chan struct{})
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		last, lastAt := -1, time.Now()
		for {
			select {
			case <-stopWatch:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if k := doneCount(t, db); k != last && k >= 0 {
				last, lastAt = k, time.Now()
			}
			if time.Since(lastAt) > 3*time.Minute {
				hung.Do(func() { hungMsg = fmt.Sprintf("no session finished for 3 minutes (%d done)", last) })
				cancel()
				return
			}
		}
	}()
	// Two crashes: pg_ctl stop -m immediate and start (the issue's), and
	// a backend killed (SIGKILL), after which the postmaster itself
	// ends every backend and recovers (57P03 "in recovery mode" until
	// it accepts again). An outage runs from the crash until the server
	// accepts connections again.
	type outage struct {
		how      string
		from, to time.Time
	}
	var outages []outage
	for i, at := range []int{n / 4, n / 2} {
		if !waitDoneOrGone(ctx, db, at) {
			break
		}
		o := outage{how: "pg_ctl stop -m immediate, start"}
		if i == 0 {
			o.from = time.Now() // counted from before pg_ctl starts: generous
			if err := server.Stop("immediate"); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
			if err := server.Restart(); err != nil {
				t.Fatal(err)
			}
		} else {
			o.how = "a backend SIGKILLed: the postmaster's crash recovery"
			pids := serverPids(t)
			o.from = time.Now()
			if len(pids) < 2 || syscall.Kill(pids[len(pids)-1], syscall.SIGKILL) != nil {
				t.Fatalf("no backend to kill among %v", pids)
			}
			waitAccepting(ctx, db)
		}
		o.to = time.Now()
		outages = append(outages, o)
	}
	claims := d.wait()
	close(stopWatch)
	<-watchDone
	elapsed := time.Since(start)
	n8, said := d.exit8()
	var lens []string
	for _, o := range outages {
		lens = append(lens, fmt.Sprintf("%s: %v", o.how, o.to.Sub(o.from).Round(time.Millisecond)))
	}
	t.Logf("figures: %d sessions, 4 clones × 4 agents through a TCP proxy, PICKUP_NETWORK_TIMEOUT=%v; outages [%s]; drain %v; exit-8 answers %d",
		n, deadline, strings.Join(lens, "; "), elapsed.Round(time.Millisecond), n8)
	if hungMsg != "" {
		t.Errorf("%s; the agents' logs:\n%s", hungMsg, dumpLogs(d))
	}
	// An exit 8 is excused only within the deadline after an outage
	// longer than the deadline (a machine so slow that the restart took
	// longer); any other is a transient failure not ridden over.
	bad := 0
	for _, at := range d.exit8Times() {
		excused := false
		for _, o := range outages {
			if o.to.Sub(o.from) > deadline && !at.Before(o.from) && at.Before(o.to.Add(deadline+5*time.Second)) {
				excused = true
			}
		}
		if !excused {
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d exit-8 answers came although no outage around them was longer than the %v deadline (outages [%s]); pickup said:\n%s",
			bad, n8, deadline, strings.Join(lens, "; "), said)
	}
	checkDrained(t, db, cs, ids, claims)
}

// waitAccepting waits until the server answers a query in db again.
func waitAccepting(ctx context.Context, db string) {
	for ctx.Err() == nil {
		if _, err := server.psqlErr(db, "SELECT 1"); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitDoneOrGone waits until at least n sessions are done, or ctx ends.
func waitDoneOrGone(ctx context.Context, db string, n int) bool {
	for ctx.Err() == nil {
		if doneCount(nil, db) >= n {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// dumpLogs is every log file the agents wrote.
func dumpLogs(d *drain) string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(d.logs, "*"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if len(data) > 4000 {
			data = data[len(data)-4000:]
		}
		fmt.Fprintf(&b, "== %s\n%s\n", filepath.Base(f), data)
	}
	return b.String()
}
