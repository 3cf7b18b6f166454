package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// fakeClock is put in the page before its script runs: Date.now answers
// window.__fake when it is set (the real clock when 0), every timer of the
// ages the page sets is recorded with its delay (window.__timers), every
// interval its script sets is counted (window.__intervals; not those of
// chromedp's polls, which run in the page too), and document.hidden
// answers window.__hidden.
const fakeClock = `(() => {
	const realNow = Date.now;
	window.__fake = 0;
	Date.now = () => window.__fake || realNow();
	window.__timers = [];
	window.__intervals = 0;
	const st = window.setTimeout, si = window.setInterval;
	// Only the ages' timer (app.js's tick) is counted: a stream that a
	// busy machine dropped sets its reconnection's timer, which is no age.
	const mine = () => (new Error().stack || "").includes("/static/app.js");
	window.setTimeout = function (f, d, ...a) { if (f && f.name === "tick") window.__timers.push(d); return st.call(window, f, d, ...a); };
	window.setInterval = function (...a) { if (mine()) window.__intervals++; return si.apply(window, a); };
	window.__hidden = false;
	Object.defineProperty(Document.prototype, "hidden", { get() { return window.__hidden; }, configurable: true });
})()`

// TestAgesTimer: the page sets its one timer for the moment the first age
// it shows changes (the next second under a minute, minute under an hour,
// hour under 48 hours, then day), and none while it is hidden; shown
// again, it counts the ages at once.
func TestAgesTimer(t *testing.T) {
	dir, _ := newBoard(t)
	srv := startServer(t, dir)
	bctx := browser(t)
	if _, err := chromedp.Call(bctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: fakeClock}); err != nil {
		t.Fatal(err)
	}
	p := tab(t, bctx, srv.URL, 1200)
	waitFor(t, p, "the stream to be live", `document.getElementById("live").textContent === "live"`)
	if n := eval[int](t, p, `window.__intervals`); n != 0 {
		t.Errorf("the page set %d intervals, want none", n)
	}
	at := eval[int64](t, p, `Number(document.getElementById("board").dataset.updated)`)
	if at == 0 {
		t.Fatal("the board says no time it was updated")
	}
	// tickAt makes the page count its ages at the frozen time at+off (as
	// when it is shown again), and returns what the header says and the
	// delay of the timer it set.
	tickAt := func(off int64) (string, int64) {
		t.Helper()
		type res struct {
			Text  string `json:"text"`
			Delay int64  `json:"delay"`
			N     int    `json:"n"`
		}
		r := eval[res](t, p, fmt.Sprintf(`(() => { window.__fake = %d; const n = window.__timers.length;
			document.dispatchEvent(new Event("visibilitychange"));
			return { text: document.getElementById("updated").textContent, delay: window.__timers[window.__timers.length - 1], n: window.__timers.length - n } })()`, at+off))
		if r.N < 1 {
			t.Fatalf("at +%d ms the page set no timer", off)
		}
		return r.Text, r.Delay
	}
	const s, m, h = int64(1000), int64(60_000), int64(3_600_000)
	for _, c := range []struct {
		off  int64
		text string
		next int64 // when the label changes next, after at
	}{
		{0, "0s", s},
		{999, "0s", s},
		{s, "1s", 2 * s},
		{59*s + 999, "59s", m},
		{m, "1m", 2 * m},
		{m + 30*s, "1m", 2 * m},
		{h - 1, "59m", h},
		{h, "1h", 2 * h},
		{48*h - 1, "47h", 48 * h},
		{48 * h, "2d", 72 * h},
		{-5 * s, "0s", s}, // this clock behind the server's
		{10*24*h + 5*h, "10d", 11 * 24 * h},
	} {
		text, delay := tickAt(c.off)
		if want := "updated " + c.text + " ago"; text != want {
			t.Errorf("at +%d ms the header says %q, want %q", c.off, text, want)
		}
		// The page sets its timer a little after the moment (20 ms).
		if want := c.next - c.off + 20; delay != want {
			t.Errorf("at +%d ms the timer is set for %d ms, want %d (when %q changes)", c.off, delay, want, c.text)
		}
	}

	// Hidden: a change arrives and is shown, but no timer is set, though
	// its ages change sooner than the one set last (the 10 days' above).
	eval[bool](t, p, `(() => { window.__hidden = true; window.__fake = 0; window.__before = window.__timers.length; return true })()`)
	pickupCmd(t, dir, "new", "--title", "made while hidden")
	waitFor(t, p, "the session made while hidden", `[...document.querySelectorAll("#waiting .title")].some(e => e.textContent === "made while hidden")`)
	if n := eval[int](t, p, `window.__timers.length - window.__before`); n != 0 {
		t.Errorf("a hidden page set %d timers", n)
	}
	// Shown again: it counts at once; the new session's age is in seconds
	// (made moments ago), and the timer is set within a second.
	eval[bool](t, p, `(() => { window.__hidden = false; document.dispatchEvent(new Event("visibilitychange")); return true })()`)
	got := eval[string](t, p, `[...document.querySelectorAll("#waiting .age time")].map(e => e.textContent).join(",")`)
	d := eval[int64](t, p, `window.__timers[window.__timers.length - 1]`)
	if !regexp.MustCompile(`^\d+[sm]$`).MatchString(got) {
		t.Errorf("the new session's age shows %q", got)
	}
	if strings.HasSuffix(got, "s") && (d > 1020 || d < 0) {
		t.Errorf("shown again with a session made %s ago, the timer is set for %d ms, want at most 1020", got, d)
	}
}
