package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestPagesShareOneStream: one browser keeps more pages of the board live
// than the 6 connections it opens to one host (each stream holds one for
// good): its pages share one stream, which the page that leads reads and
// hands to the others. A session made by another process reaches every
// page; when the leading page closes, another leads, and the next
// session reaches every page left.
func TestPagesShareOneStream(t *testing.T) {
	dir, _ := newBoard(t)
	pickupCmd(t, dir, "new", "--title", "before")
	srv := startServer(t, dir)
	bctx := browser(t)
	// The opener is a document of the server's origin that is not the
	// board (it reads no stream), so that any page of the board can be
	// closed while the test keeps its hands on the others.
	do(t, bctx, chromedp.Navigate(srv.Base+"/static/style.css"))
	const n = 10
	openMore(t, bctx, srv.URL, n)

	pages := `window.__pages.filter(w => !w.closed)`
	roles := func() map[string]int {
		got := eval[[]string](t, bctx, pages+`.map(w => w.document.documentElement.dataset.stream || "")`)
		m := map[string]int{}
		for _, r := range got {
			m[r]++
		}
		return m
	}
	waitFor(t, bctx, "one page leading", pages+`.filter(w => w.document.documentElement.dataset.stream === "leader").length === 1`)
	if r := roles(); r["leader"] != 1 || r["follower"] != n-1 {
		t.Fatalf("the pages' roles: %v, want 1 leader and %d followers", r, n-1)
	}
	showing := func(title string) string {
		return fmt.Sprintf(pages+`.filter(w => [...w.document.querySelectorAll("#waiting .title")].some(e => e.textContent === %q)).length`, title)
	}
	pickupCmd(t, dir, "new", "--title", "made while ten pages are open")
	waitCount(t, bctx, "pages showing the new session", showing("made while ten pages are open"), n)

	// The leading page goes: another takes the stream over.
	eval[bool](t, bctx, pages+`.find(w => w.document.documentElement.dataset.stream === "leader").close() || true`)
	waitFor(t, bctx, "another page leading", pages+`.length === `+fmt.Sprint(n-1)+` && `+pages+`.filter(w => w.document.documentElement.dataset.stream === "leader").length === 1`)
	pickupCmd(t, dir, "new", "--title", "made after the leader went")
	waitCount(t, bctx, "pages showing the session made after the leader went", showing("made after the leader went"), n-1)
	if live := eval[int](t, bctx, pages+`.filter(w => w.document.getElementById("live").textContent === "live").length`); live != n-1 {
		t.Errorf("%d of %d pages say live", live, n-1)
	}
}

// withQuery adds kv to url's query.
func withQuery(url, kv string) string {
	if strings.Contains(url, "?") {
		return url + "&" + kv
	}
	return url + "?" + kv
}
