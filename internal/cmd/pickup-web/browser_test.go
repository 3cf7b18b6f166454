package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

var update = flag.Bool("update", false, "rewrite the golden DOM snapshots in testdata/")

// TestPageLive: the first view; a session made by another process appears
// on the open page with no reload; an owner whose process is killed shows
// as dead; the filters are kept in the address.
func TestPageLive(t *testing.T) {
	dir, b := newBoard(t)
	pickupCmd(t, dir, "new", "--title", "the first", "--tag", "parser")
	pickupCmd(t, dir, "new", "--title", "the urgent one", "--priority", "high")
	srv := startServer(t, dir)
	bctx := browser(t)
	page := tab(t, bctx, srv.URL, 1200)

	// The first view: what waits, in next's order, and the stream is live.
	waitFor(t, page, "the stream to be live", `document.getElementById("live").textContent === "live"`)
	got := eval[[]string](t, page, `[...document.querySelectorAll("#waiting .title")].map(e => e.textContent)`)
	if strings.Join(got, "|") != "the urgent one|the first" {
		t.Fatalf("waiting on the first view: %q, want the urgent one then the first", got)
	}
	if c := eval[string](t, page, `document.querySelector(".counts").textContent`); !strings.Contains(c, "2 waiting") {
		t.Errorf("counts: %q", c)
	}
	// A mark that a reload would lose.
	eval[bool](t, page, `window.__mark = true`)

	// Another process makes a session: it appears with no reload.
	start := time.Now()
	pickupCmd(t, dir, "new", "--title", "made elsewhere")
	made := time.Now()
	waitFor(t, page, "the new session on the page", `[...document.querySelectorAll("#waiting .title")].some(e => e.textContent === "made elsewhere")`)
	seen := time.Now()
	t.Logf("latency: a session made by another process shown %v after pickup new exited (%v after it started)", seen.Sub(made).Round(time.Millisecond), seen.Sub(start).Round(time.Millisecond))
	if !eval[bool](t, page, `window.__mark === true`) {
		t.Fatalf("the page was reloaded")
	}

	// An owner whose process is killed shows as dead, with no reload.
	holder := exec.Command("sleep", "600")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	var reapOnce sync.Once
	kill := func() { reapOnce.Do(func() { _ = holder.Process.Kill(); _ = holder.Wait() }) }
	t.Cleanup(kill)
	p, err := proc.Env{}.Lookup(holder.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&claim.Leases{Board: b}).Heartbeat("agent-1", claim.Holder(p)); err != nil {
		t.Fatal(err)
	}
	c, err := claim.New(b, "agent-1")
	if err != nil {
		t.Fatal(err)
	}
	first := findTitle(t, b, "the first")
	if _, err := c.Claim(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	waitFor(t, page, "agent-1 alive, holding the first", `(() => { const o = document.querySelector('.owner[data-owner="agent-1"]');
		return !!o && o.querySelector(".state")?.textContent === "alive" && o.querySelector(".holds .title")?.textContent === "the first" })()`)
	kill()
	waitFor(t, page, "agent-1 dead", `(() => { const o = document.querySelector('.owner[data-owner="agent-1"]');
		return !!o && o.querySelector(".state")?.textContent === "dead" })()`)
	if !eval[bool](t, page, `window.__mark === true`) {
		t.Fatalf("the page was reloaded")
	}

	// The filters come from the address and go back into it.
	do(t, page, chromedp.Navigate(srv.Base+"/?state=doing"), chromedp.WaitReady(chromedp.CSS("#board")))
	waitFor(t, page, "the state filter applied", `document.getElementById("f-state").value === "doing"`)
	visible := eval[[]string](t, page, `[...document.querySelectorAll(".item:not(.hidden) .title")].map(e => e.textContent)`)
	if strings.Join(visible, "|") != "the first" {
		t.Errorf("?state=doing shows %q, want only the first", visible)
	}
	eval[bool](t, page, `(() => { const s = document.getElementById("f-tag"); s.value = "parser"; s.dispatchEvent(new Event("change")); return true })()`)
	if loc := eval[string](t, page, `location.search`); loc != "?state=doing&tag=parser" {
		t.Errorf("after choosing tag parser the address says %q", loc)
	}
}

// findTitle returns the id of the session titled title.
func findTitle(t *testing.T, b *sessions.Board, title string) string {
	t.Helper()
	list, err := b.List(sessions.Todo, sessions.Doing, sessions.Done)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if s.Title == title {
			return s.ID
		}
	}
	t.Fatalf("no session titled %q", title)
	return ""
}

// hostile is a title that would run script if any byte of it reached the
// page as markup, with a bidirectional override that would reorder it.
const hostile = "<img src=x onerror=\"window.__pwned='title'\"></script><script>window.__pwned='script'</script>\u202eevil"

const hostileBody = "# <img src=x onerror=\"window.__pwned='h1'\">\n\n<script>window.__pwned='body'</script>\n\n- `</code><img src=x onerror=\"window.__pwned='code'\">`\n"

// TestHostileText: titles, tags and bodies from the board render as text
// and run nothing, in the first view, in a live update, and on the
// session's page.
func TestHostileText(t *testing.T) {
	dir, b := newBoard(t)
	s1, err := b.Create(sessions.Meta{Title: hostile, Tags: []string{"<b>x</b>"}}, []byte(hostileBody))
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, dir)
	bctx := browser(t)
	page := tab(t, bctx, srv.URL, 1200)
	waitFor(t, page, "the stream to be live", `document.getElementById("live").textContent === "live"`)
	check := func(where string) {
		t.Helper()
		if n := eval[int](t, page, `document.querySelectorAll("img, script:not([src]), b").length`); n != 0 {
			t.Errorf("%s: %d elements made from the board's text", where, n)
		}
		if v := eval[string](t, page, `String(window.__pwned)`); v != "undefined" {
			t.Errorf("%s: the board's text ran script: window.__pwned = %s", where, v)
		}
	}
	check("first view")
	titles := eval[[]string](t, page, `[...document.querySelectorAll("#waiting .title")].map(e => e.textContent)`)
	want := strings.ReplaceAll(hostile, "\u202e", `\u202e`)
	if len(titles) != 1 || titles[0] != want {
		t.Fatalf("the title shows as %q, want the text %q", titles, want)
	}
	// The same through the stream.
	if _, err := b.Create(sessions.Meta{Title: hostile + " 2"}, []byte(hostileBody)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, page, "the second hostile session", `document.querySelectorAll("#waiting .title").length === 2`)
	check("live update")
	// The session's page: the file rendered as markdown, escaped.
	do(t, page, chromedp.Navigate(srv.Base+"/s/"+s1.ID), chromedp.WaitReady(chromedp.CSS("article.body")))
	check("session page")
	body := eval[string](t, page, `document.querySelector("article.body").textContent`)
	for _, part := range []string{"<img src=x onerror=\"window.__pwned='h1'\">", "<script>window.__pwned='body'</script>"} {
		if !strings.Contains(body, part) {
			t.Errorf("the body does not show %q as text: %q", part, body)
		}
	}
	if n := eval[int](t, page, `document.querySelectorAll("article.body h2, article.body li code").length`); n != 2 {
		t.Errorf("the markdown was not rendered (a heading and a code span): %d", n)
	}
}

// idsAndAges makes a page's text comparable from run to run.
var idsAndAges = regexp.MustCompile(`\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d(-\d+)?|\b\d+[smhd]\b|\d\d:\d\d:\d\d|/tmp/\S+`)

// TestGoldenWidths: the view at 360 px (one column, nothing wider than the
// screen) and on a wide screen (columns side by side), as a DOM snapshot:
// each section's column and its rows' text.
func TestGoldenWidths(t *testing.T) {
	dir, b := newBoard(t)
	for _, m := range []sessions.Meta{
		{Title: "Fix the parser on very long lines that wrap many times on a narrow phone screen", Tags: []string{"parser"}, Priority: sessions.High},
		{Title: "Write the release notes", Tags: []string{"docs"}},
		{Title: "Profile the drain", Priority: sessions.Low},
	} {
		if _, err := b.Create(m, nil); err != nil {
			t.Fatal(err)
		}
	}
	srv := startServer(t, dir)
	bctx := browser(t)
	for _, width := range []int{360, 1400} {
		page := tab(t, bctx, srv.URL, width)
		waitFor(t, page, "the stream to be live", `document.getElementById("live").textContent === "live"`)
		snap := eval[string](t, page, `(() => {
			const out = [];
			const lefts = [...new Set([...document.querySelectorAll("#board > section")].map(s => Math.round(s.getBoundingClientRect().left)))].sort((a, b) => a - b);
			out.push("columns " + lefts.length + (document.documentElement.scrollWidth > innerWidth ? " (wider than the screen!)" : ""));
			for (const s of document.querySelectorAll("#board > section")) {
				out.push("section " + s.id + " column " + (lefts.indexOf(Math.round(s.getBoundingClientRect().left)) + 1) + ": " + s.querySelector("h2").textContent);
				for (const li of s.querySelectorAll("li, .owner, .empty")) out.push("  " + li.textContent.replace(/\s+/g, " ").trim());
			}
			return out.join("\n") + "\n";
		})()`)
		snap = idsAndAges.ReplaceAllString(snap, "_")
		golden := filepath.Join("testdata", "dom-"+map[int]string{360: "360", 1400: "wide"}[width]+".txt")
		if dirShots := os.Getenv("PICKUP_WEB_SCREENSHOTS"); dirShots != "" {
			if png, err := chromedp.Run(page, chromedp.FullScreenshot(100)); err == nil {
				_ = os.WriteFile(filepath.Join(dirShots, strings.TrimSuffix(filepath.Base(golden), ".txt")+".png"), png, 0o644)
			}
		}
		if *update {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, []byte(snap), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (go test -run TestGoldenWidths -update writes it)", err)
		}
		if snap != string(want) {
			t.Errorf("the view at %d px differs from %s (go test -run TestGoldenWidths -update rewrites it):\n--- got\n%s--- want\n%s", width, golden, snap, want)
		}
	}
}

// TestIdle: with two pages open and nothing changing, the server does no
// work: its CPU time over 10 s stays about nothing.
func TestIdle(t *testing.T) {
	dir, b := newBoard(t)
	if _, err := b.Create(sessions.Meta{Title: "waits"}, nil); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, dir)
	bctx := browser(t)
	page := tab(t, bctx, srv.URL, 1000)
	waitFor(t, page, "the stream to be live", `document.getElementById("live").textContent === "live"`)
	openMore(t, page, srv.URL, 1) // two pages open
	if n := eval[int](t, page, `window.__pages.length`); n != 1 {
		t.Fatalf("%d more pages", n)
	}
	pid := srv.cmd.Process.Pid
	before := cpuTicks(t, pid)
	time.Sleep(10 * time.Second)
	after := cpuTicks(t, pid)
	t.Logf("idle: pickup-web used %d clock ticks (utime+stime, 1/100 s) in 10 s with two pages open", after-before)
	// Generous: a server that polled or redrew would use far more.
	if after-before > 20 {
		t.Errorf("pickup-web used %d clock ticks in 10 s of a board where nothing changed, want about 0", after-before)
	}
	if err := srv.cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("pickup-web is gone: %v", err)
	}
}

// TestWaitingFirstRows: the waiting list shows its first 50 rows in next's
// order and says how many more; the filters still find every row (a tag
// only rows beyond the first 50 carry shows them); "show all" shows every
// row and is kept in the address; as the first rows go, the next come in.
func TestWaitingFirstRows(t *testing.T) {
	dir, b := newBoard(t)
	var ids []string
	for i := range 60 {
		m := sessions.Meta{Title: fmt.Sprintf("row %02d", i), CreatedAt: time.Unix(1_700_000_000+int64(i), 0)}
		if i >= 55 {
			m.Tags = []string{"late"}
		}
		s, err := b.Create(m, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	srv := startServer(t, dir)
	page := tab(t, browser(t), srv.URL, 1200)
	waitFor(t, page, "the stream to be live", `document.getElementById("live").textContent === "live"`)
	type view struct {
		Shown []string `json:"shown"` // the titles of the rows laid out (the history: their session ids)
		More  string   `json:"more"`  // what the line under the list says ("" if hidden)
		Rows  int      `json:"rows"`  // the list's rows, laid out or not
	}
	lookAt := func(list string) view {
		t.Helper()
		return eval[view](t, page, fmt.Sprintf(`(() => {
			const rows = [...document.querySelectorAll("#%s-items > li")];
			const shown = rows.filter(li => li.getClientRects().length > 0).map(li => (li.querySelector(".title") || li.querySelector(".sid")).textContent);
			const more = document.getElementById("%s-more");
			return { shown, more: more.hidden ? "" : more.textContent, rows: rows.length };
		})()`, list, list))
	}
	look := func() view { t.Helper(); return lookAt("waiting") }
	rows := func(from, to int) string {
		var s []string
		for i := from; i < to; i++ {
			s = append(s, fmt.Sprintf("row %02d", i))
		}
		return strings.Join(s, "|")
	}
	choose := func(id, value string) {
		t.Helper()
		eval[bool](t, page, fmt.Sprintf(`(() => { const s = document.getElementById(%q); s.value = %q; s.dispatchEvent(new Event("change")); return true })()`, id, value))
	}

	v := look()
	if strings.Join(v.Shown, "|") != rows(0, 50) || v.More != "and 10 more show all" {
		t.Fatalf("the first view shows %d rows %q, and %q; want rows 00 to 49 and \"and 10 more show all\"", len(v.Shown), v.Shown, v.More)
	}
	// A tag that only rows beyond the first 50 have: they show.
	choose("f-tag", "late")
	if v := look(); strings.Join(v.Shown, "|") != rows(55, 60) || v.More != "" {
		t.Errorf("tag late shows %q, and %q; want rows 55 to 59 and no more line", v.Shown, v.More)
	}
	choose("f-tag", "")
	// Show all: every row, kept in the address.
	eval[bool](t, page, `document.getElementById("waiting-all").click() || true`)
	if v := look(); strings.Join(v.Shown, "|") != rows(0, 60) || v.More != "all 60 shown show the first 50" {
		t.Errorf("after show all: %d rows, and %q", len(v.Shown), v.More)
	}
	if loc := eval[string](t, page, `location.search`); loc != "?waiting=all" {
		t.Errorf("after show all the address says %q", loc)
	}
	eval[bool](t, page, `document.getElementById("waiting-all").click() || true`)
	// The first rows go (claimed): the next come in.
	c, err := claim.New(b, "agent-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids[:3] {
		if _, err := c.Claim(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, page, "three rows claimed", `document.querySelector(".counts").textContent.startsWith("57 waiting")`)
	if v := look(); strings.Join(v.Shown, "|") != rows(3, 53) || v.More != "and 7 more show all" {
		t.Errorf("after three claims: %q, and %q; want rows 03 to 52 and \"and 7 more show all\"", v.Shown, v.More)
	}

	// The history: its newest 50 events of the 63 (60 made, 3 claimed),
	// newest first, and how many older; show all shows all 63.
	h := lookAt("history")
	if h.Rows != 63 || len(h.Shown) != 50 || h.More != "and 13 older show all" {
		t.Fatalf("the history has %d rows, %d laid out, and says %q; want 63, 50 and \"and 13 older show all\"", h.Rows, len(h.Shown), h.More)
	}
	want := []string{ids[2], ids[1], ids[0]}
	for i := 59; len(want) < 50; i-- {
		want = append(want, ids[i])
	}
	if !slices.Equal(h.Shown, want) {
		t.Errorf("the history shows %q, want the newest 50 events' sessions %q", h.Shown, want)
	}
	eval[bool](t, page, `document.getElementById("history-all").click() || true`)
	if h := lookAt("history"); len(h.Shown) != 63 || h.More != "all 63 shown show the newest 50" {
		t.Errorf("after show all the history shows %d rows and says %q", len(h.Shown), h.More)
	}
	if loc := eval[string](t, page, `location.search`); loc != "?history=all" {
		t.Errorf("after show all of the history the address says %q", loc)
	}
}
