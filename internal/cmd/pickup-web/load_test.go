package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pickup-dev/pickup/sessions"
)

// TestLoad: pages open while 4 agents (4 pickup work processes) drain the
// board: every page ends showing the same final board. It also times the
// drain against the same drain alone (the browsers stopped), with the
// pages open but idle, and with as many floor pages (the same stream, one
// text node set per update), and prints the ratios and where the CPU went
// as figures, never as assertions (scripts/bench prints them as its "web"
// rows). go test runs 6 pages (one browser) and 40 sessions;
// PICKUP_WEB_LOAD=full (scripts/bench) runs 50 pages and 400.
// perBrowser is how many pages of the board one browser keeps live.
const perBrowser = 6

func TestLoad(t *testing.T) {
	pages, n, rounds := 6, 40, 1
	if os.Getenv("PICKUP_WEB_LOAD") == "full" {
		pages, n, rounds = 50, 400, 3
	}
	fillBoard := func(b *sessions.Board) {
		for i := range n {
			if _, err := b.Create(sessions.Meta{Title: fmt.Sprintf("session %d", i), CreatedAt: time.Unix(1_700_000_000+int64(i), 0)}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	fill := func() string {
		dir, b := newBoard(t)
		fillBoard(b)
		return dir
	}
	loaded, loadedBoard := newBoard(t)
	fillBoard(loadedBoard)

	srv := startServer(t, loaded)
	// Each page stands for a person, with a stream of its own
	// (?stream=own: the pages of one browser share one otherwise, see
	// TestPagesShareOneStream). A browser opens at most 6 connections to
	// one host over HTTP/1.1, and each stream holds one: 6 pages a
	// browser.
	own := withQuery(srv.URL, "stream=own")
	var tabs []context.Context
	boards := map[int]bool{} // the pids of the browsers of the board's pages
	for left := pages; left > 0; left -= perBrowser {
		page := tab(t, browser(t), own, 1200)
		boards[browserPid(page)] = true
		waitFor(t, page, "the stream to be live", `document.getElementById("live").textContent === "live"`)
		openMore(t, page, own, min(left, perBrowser)-1)
		tabs = append(tabs, page)
	}

	// The floor: as many pages, in as many browsers, that receive the
	// same stream of updates (a server of their own, on a board of its
	// own filled and drained alike) and do the least a page can do with
	// each: set one text node. What they cost the drain is what any page
	// would, the server's work and the browsers' taking in the stream;
	// what the board's pages cost beyond it is theirs.
	floorDir, floorBoard := newBoard(t)
	fillBoard(floorBoard)
	floorSrv := startServer(t, floorDir)
	var floorTabs []context.Context
	floors := map[int]bool{}
	for left := pages; left > 0; left -= perBrowser {
		b := browser(t)
		floors[browserPid(b)] = true
		openFloor(t, b, floorSrv.Base, min(left, perBrowser))
		floorTabs = append(floorTabs, b)
	}
	floorCaughtUp := func(what string) uint64 {
		t.Helper()
		v := caughtUp(t, floorSrv, n)
		for _, b := range floorTabs {
			waitFor(t, b, what, fmt.Sprintf(`window.__floors.length === window.__floorWins.length + 1 && window.__floors.every(f => f.v >= %d)`, v))
		}
		return v
	}
	floorCaughtUp("every floor page showing the filled board")

	// Rounds alternate four drains, each of a full board (a busy
	// machine's drift hits all alike): alone (the browsers stopped with
	// SIGSTOP, the servers idle); with the pages open but idle (they watch
	// the loaded board, which does not change: what 50 open pages cost);
	// the floor's (the board's pages stopped, the floor's pages watching
	// their board drain); and watched (the drain of the loaded board
	// itself). The floor's browsers are stopped but for their drain.
	var ratios, idleRatios, floorRatios []float64
	rate := func(d time.Duration) float64 { return float64(n) / d.Seconds() }
	var alone, idle, floor, busy time.Duration
	var aloneCPU, idleCPU, floorCPU, busyCPU cpuSplit
	var busyUpdates, floorUpdates uint64 // the renderings the servers made during those drains
	pid, floorPid := srv.cmd.Process.Pid, floorSrv.cmd.Process.Pid
	for round := range rounds {
		if round > 0 {
			fillBoard(loadedBoard)
			fillBoard(floorBoard)
			for _, page := range tabs {
				waitFor(t, page, "every page showing the board filled again", fmt.Sprintf(`[window, ...window.__pages].every(w => {
					const c = w.document.querySelector(".counts"); return !!c && c.textContent.startsWith(%q) })`, fmt.Sprintf("%d waiting", n)))
			}
			floorCaughtUp("every floor page showing the board filled again")
		}
		board := fill()
		signalBrowsers(syscall.SIGSTOP)
		before := sampleCPU(pid)
		alone = drain(t, board)
		aloneCPU = aloneCPU.plus(sampleCPU(pid).minus(before))
		signalBrowsers(syscall.SIGCONT)

		board = fill()
		signalSet(floors, syscall.SIGSTOP)
		before = sampleCPU(pid)
		idle = drain(t, board)
		idleCPU = idleCPU.plus(sampleCPU(pid).minus(before))

		signalSet(boards, syscall.SIGSTOP)
		signalSet(floors, syscall.SIGCONT)
		before, v := sampleCPU(floorPid), caughtUp(t, floorSrv, 0)
		floor = drain(t, floorDir)
		floorCPU = floorCPU.plus(sampleCPU(floorPid).minus(before))
		floorUpdates += caughtUp(t, floorSrv, 0) - v
		signalSet(floors, syscall.SIGSTOP)
		signalSet(boards, syscall.SIGCONT)

		before, v = sampleCPU(pid), caughtUp(t, srv, 0)
		busy = drain(t, loaded)
		busyCPU = busyCPU.plus(sampleCPU(pid).minus(before))
		busyUpdates += caughtUp(t, srv, 0) - v
		signalSet(floors, syscall.SIGCONT)
		ratios = append(ratios, rate(busy)/rate(alone))
		idleRatios = append(idleRatios, rate(idle)/rate(alone))
		floorRatios = append(floorRatios, rate(floor)/rate(alone))
	}
	// Every floor page saw the last update of its board.
	v := caughtUp(t, floorSrv, 0)
	for _, b := range floorTabs {
		waitFor(t, b, "every floor page at the floor board's last version", fmt.Sprintf(`window.__floors.every(f => f.v >= %d)`, v))
	}

	want := fmt.Sprintf("0 waiting · 0 held · 0 set aside · %d done", rounds*n)
	var first string
	for i, page := range tabs {
		waitFor(t, page, "every page showing the final board", fmt.Sprintf(`[window, ...window.__pages].every(w => {
			const c = w.document.querySelector(".counts"); return !!c && c.textContent === %q })`, want))
		// The same board on every page: the same rendering, to the history.
		looks := eval[[]string](t, page, `[window, ...window.__pages].map(w => w.document.getElementById("board").dataset.updated + "|" +
			[...w.document.querySelectorAll("#history .ev")].map(e => e.textContent).join("\n"))`)
		for j, l := range looks {
			if first == "" {
				first = l
			}
			if l != first {
				t.Fatalf("page %d of browser %d shows another final board than the first page", j+1, i+1)
			}
		}
	}
	fsync := "fsync on"
	if os.Getenv("PICKUP_NO_SYNC") == "1" {
		fsync = "fsync off"
	}
	median := func(r []float64) float64 { r = slices.Clone(r); slices.Sort(r); return r[len(r)/2] }
	fmt.Printf("web load: 4 agents drain %d sessions with %d pages open (each its own stream): %.1f sessions/s; alone (the browsers stopped): %.1f/s (last round); ratio %.3f, median of %d alternated rounds %v (%s)\n",
		n, pages, rate(busy), rate(alone), median(ratios), rounds, ratios, fsync)
	fmt.Printf("web load: the same %d pages open and idle (their board does not change): %.1f sessions/s (last round); ratio to alone %.3f, median %v\n",
		pages, rate(idle), median(idleRatios), idleRatios)
	fmt.Printf("web load: the floor, %d pages that set one text node per update of the same stream (a server of their own, the board's pages stopped): %.1f sessions/s (last round); ratio to alone %.3f, median %v\n",
		pages, rate(floor), median(floorRatios), floorRatios)
	// Where the CPU went, summed over the rounds' drains of each kind.
	fmt.Printf("web load: CPU of the %d watched drains: %v\n", rounds, busyCPU)
	fmt.Printf("web load: CPU of the %d idle-page drains: %v\n", rounds, idleCPU)
	fmt.Printf("web load: CPU of the %d floor drains: %v\n", rounds, floorCPU)
	fmt.Printf("web load: CPU of the %d drains alone: %v\n", rounds, aloneCPU)
	// The browsers' CPU per update a page took in: what a drain's speed
	// does not change (a slower drain makes more updates).
	perUpdate := func(c cpuSplit, updates uint64) string {
		ms := func(ticks int) float64 { return float64(ticks) * 10 / float64(max(updates, 1)*uint64(pages)) }
		return fmt.Sprintf("chromium %.1f ms (renderers %.1f ms)", ms(c.renderers+c.browser+c.chromium), ms(c.renderers))
	}
	fmt.Printf("web load: CPU per page and update: the board's pages %s over %d updates; the floor's %s over %d\n",
		perUpdate(busyCPU, busyUpdates), busyUpdates, perUpdate(floorCPU, floorUpdates), floorUpdates)
}

// openFloor opens n floor pages in the browser b: documents of the server
// at base that are not the board (its style sheet), each reading the
// server's stream with an EventSource of its own and setting one text
// node per event (window.__floors: each page's last version). The first
// is b's tab, the others windows it opened (window.__floorWins).
func openFloor(t *testing.T, b context.Context, base string, n int) {
	t.Helper()
	url := base + "/static/style.css"
	do(t, b, chromedp.EmulateViewport(1200, 900), chromedp.Navigate(url))
	eval[bool](t, b, fmt.Sprintf(`(() => { window.__floorWins = []; for (let i = 0; i < %d; i++) window.__floorWins.push(window.open(%q, "_blank")); return true })()`, n-1, url))
	waitCount(t, b, "floor pages loaded", `window.__floorWins.filter(w => w.document && w.document.readyState === "complete" && w.location.href === `+strconv.Quote(url)+` && !!w.document.body).length`, n-1)
	eval[bool](t, b, fmt.Sprintf(`(() => {
		const floor = w => {
			const d = w.document.createElement("div"), text = w.document.createTextNode("");
			d.appendChild(text);
			w.document.body.prepend(d);
			const f = { v: 0 };
			const es = new w.EventSource(%q);
			const set = e => { f.v = Number(e.lastEventId); text.data = e.lastEventId; };
			es.addEventListener("board", set);
			es.addEventListener("patch", set);
			return f;
		};
		window.__floors = [window, ...window.__floorWins].map(floor);
		return true })()`, base+"/events"))
	waitCount(t, b, "floor pages reading the stream", `window.__floors.filter(f => f.v > 0).length`, n)
}

// caughtUp waits until srv's board shows want waiting sessions (0: any)
// and returns the version of its rendering.
func caughtUp(t *testing.T, srv *webServer, want int) uint64 {
	t.Helper()
	last, since := "", time.Now()
	for {
		res, err := http.Get(srv.Base + "/board")
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		v, _ := strconv.ParseUint(res.Header.Get("X-Pickup-Version"), 10, 64)
		if want == 0 || strings.Contains(string(body), fmt.Sprintf("<span>%d waiting</span>", want)) {
			return v
		}
		if s := string(body); s != last {
			last, since = s, time.Now()
		} else if time.Since(since) > hang {
			t.Fatalf("%s/board does not show %d waiting, and did not change for %s", srv.Base, want, hang)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// drain runs 4 agents, each a pickup work process, until the board in dir
// is empty, and returns how long it took.
func drain(t *testing.T, dir string) time.Duration {
	t.Helper()
	bin := pickupBin.Path(t, buildDir(t))
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	outs := make([][]byte, 4)
	for a := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, "work", "-j", "1", "--", "true")
			cmd.Env = append(os.Environ(), "PICKUP_DIR="+dir, fmt.Sprintf("PICKUP_OWNER=agent-%d", a+1))
			outs[a], errs[a] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	took := time.Since(start)
	for a, err := range errs {
		if err != nil {
			t.Fatalf("agent-%d: %v\n%s", a+1, err, outs[a])
		}
	}
	return took
}

// TestLoadStreams is TestLoad with the streams read by this test instead
// of browsers: the server's own cost to the drain, without the browsers'
// (which, in use, run on the people's machines, not beside the agents).
// Every stream must end with the final board. PICKUP_WEB_LOAD=full runs
// 50 streams and 400 sessions, 3 alternated rounds.
func TestLoadStreams(t *testing.T) {
	streams, n, rounds := 6, 40, 1
	if os.Getenv("PICKUP_WEB_LOAD") == "full" {
		streams, n, rounds = 50, 400, 3
	}
	fillBoard := func(b *sessions.Board) {
		for i := range n {
			if _, err := b.Create(sessions.Meta{Title: fmt.Sprintf("session %d", i), CreatedAt: time.Unix(1_700_000_000+int64(i), 0)}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	loaded, loadedBoard := newBoard(t)
	fillBoard(loadedBoard)
	srv := startServer(t, loaded)
	readers := make([]*streamReader, streams)
	for i := range readers {
		readers[i] = readStream(t, srv.Base+"/events")
	}
	final := func(done int) string {
		return fmt.Sprintf("<span>0 waiting</span> · <span>0 held</span> · <span>0 set aside</span> · <span>%d done</span>", done)
	}
	rate := func(d time.Duration) float64 { return float64(n) / d.Seconds() }
	var ratios []float64
	var cpu cpuSplit
	pid := srv.cmd.Process.Pid
	for round := range rounds {
		if round > 0 {
			fillBoard(loadedBoard)
		}
		dir, b := newBoard(t)
		fillBoard(b)
		took := drain(t, dir)
		before := sampleCPU(pid)
		busy := drain(t, loaded)
		cpu = cpu.plus(sampleCPU(pid).minus(before))
		ratios = append(ratios, rate(busy)/rate(took))
		for i, r := range readers {
			if err := r.waitFor(final((round + 1) * n)); err != nil {
				t.Fatalf("stream %d did not end with the final board of round %d: %v", i+1, round+1, err)
			}
		}
	}
	sorted := slices.Clone(ratios)
	slices.Sort(sorted)
	fsync := "fsync on"
	if os.Getenv("PICKUP_NO_SYNC") == "1" {
		fsync = "fsync off"
	}
	// Every stream's board, patch after patch, is the server's whole
	// rendering of the final board.
	res, err := http.Get(srv.Base + "/board")
	if err != nil {
		t.Fatal(err)
	}
	whole, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var read int64
	frames, wholes := 0, 0
	for i, r := range readers {
		read += r.read()
		r.mu.Lock()
		d := r.board.same(string(whole))
		frames += r.frames
		wholes += r.wholes
		r.mu.Unlock()
		if d != "" {
			t.Errorf("stream %d ends with another board than the server's: %s", i+1, d)
		}
	}
	fmt.Printf("web load (streams only): 4 agents drain %d sessions with %d streams read: ratio to no server, median of %d alternated rounds %.3f %v; pickup serve CPU %.2f s over the watched drains (%s)\n",
		n, streams, rounds, sorted[len(sorted)/2], ratios, float64(cpu.server)/100, fsync)
	fmt.Printf("web load (streams only): CPU of the %d watched drains: %v; the streams carried %.1f MB in all (%.1f kB a stream a round, %d frames a stream a round, %d of them whole boards in all the streams' %d)\n",
		rounds, cpu, float64(read)/1e6, float64(read)/1e3/float64(streams*rounds), frames/(streams*rounds), wholes, frames)
}

// streamReader reads one /events stream and keeps the board its frames
// make (the whole board, then its patches, applied as a page does).
type streamReader struct {
	mu     sync.Mutex
	board  shown
	err    error
	frames int   // how many frames it read
	wholes int   // how many of them were the whole board
	bytes  int64 // read so far
	wake   chan struct{}
}

func (r *streamReader) read() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bytes
}

func readStream(t *testing.T, url string) *streamReader {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, res.Status)
	}
	r := &streamReader{wake: make(chan struct{}, 1)}
	go func() {
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		var event string
		var id uint64
		var data []string
		for sc.Scan() {
			line := sc.Text()
			r.mu.Lock()
			r.bytes += int64(len(line)) + 1
			r.mu.Unlock()
			if k, v, ok := strings.Cut(line, ": "); ok && line != "" {
				switch k {
				case "event":
					event = v
				case "id":
					id, _ = strconv.ParseUint(v, 10, 64)
				case "data":
					data = append(data, v)
				}
				continue
			}
			if line != "" || data == nil {
				continue
			}
			r.mu.Lock()
			if r.err == nil {
				if event == "patch" {
					r.err = r.board.patch(strings.Join(data, "\n"), id)
				} else {
					r.err = r.board.whole(strings.Join(data, "\n"), id)
					r.wholes++
				}
			}
			r.frames++
			r.mu.Unlock()
			select {
			case r.wake <- struct{}{}:
			default:
			}
			event, data = "", nil
		}
	}()
	return r
}

// waitFor waits until the board's counts hold want, failing only when no
// frame came for the hang bound.
func (r *streamReader) waitFor(want string) error {
	for {
		r.mu.Lock()
		ok, err := r.board.html != nil && strings.Contains(r.board.html["board"]["counts"], want), r.err
		r.mu.Unlock()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-r.wake:
		case <-time.After(hang):
			return fmt.Errorf("no frame for %s", hang)
		}
	}
}
