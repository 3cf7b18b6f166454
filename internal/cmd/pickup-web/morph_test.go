package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// TestUpdateKeepsNodes: an update changes only the DOM nodes of the rows
// that changed. The test marks every keyed node of the board (an
// expando property set through the DevTools protocol); after one
// session's priority changes, the only node gone is that session's row
// (made again at the top), the only nodes new are it and the history's
// new events, and every other node is the same node as before.
func TestUpdateKeepsNodes(t *testing.T) {
	dir, b := newBoard(t)
	var ids []string
	for i := range 6 {
		s, err := b.Create(sessions.Meta{Title: fmt.Sprintf("row %d", i)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	c, err := claim.New(b, "agent-1")
	if err != nil {
		t.Fatal(err)
	}
	// agent-1 holds one first, so that it is on the board before the
	// marks (a new owner would be a change of its own).
	if _, err := c.Claim(context.Background(), ids[0]); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, dir)
	page := tab(t, browser(t), srv.URL, 1200)
	waitFor(t, page, "the stream to be live", `document.getElementById("live").textContent === "live"`)
	waitFor(t, page, "agent-1 holding row 0", `!!document.querySelector('.owner[data-owner="agent-1"] .holds .title')`)
	marked := eval[int](t, page, `(() => { window.__keys = []; let i = 0;
		for (const el of document.querySelectorAll("#board [data-key]")) { el.__mark = ++i; window.__keys[i] = el.dataset.key; }
		document.getElementById("board").__mark = "board"; return i })()`)
	if marked < 20 {
		t.Fatalf("only %d keyed nodes on the board", marked)
	}

	if _, err := c.SetPriority(context.Background(), ids[5], sessions.High); err != nil {
		t.Fatal(err)
	}
	waitFor(t, page, "row 5 first in waiting", `document.querySelector("#waiting-items .title")?.textContent === "row 5"`)

	gone := eval[[]string](t, page, `(() => { const here = new Set([...document.querySelectorAll("#board [data-key]")].map(el => el.__mark));
		return window.__keys.filter((k, i) => k !== undefined && !here.has(i)) })()`)
	if !slices.Equal(gone, []string{ids[5]}) {
		t.Errorf("nodes gone: %q, want only row 5's (%s)", gone, ids[5])
	}
	fresh := eval[[]string](t, page, `[...document.querySelectorAll("#board [data-key]")].filter(el => !el.__mark).map(el => el.parentElement.id + "/" + el.textContent.replace(/\s+/g, " ").trim())`)
	ok := len(fresh) >= 1 && strings.HasPrefix(fresh[0], "waiting-items/high") && strings.Contains(fresh[0], "row 5")
	for _, f := range fresh[min(1, len(fresh)):] {
		ok = ok && strings.HasPrefix(f, "history-items/") // a new event, if the history shows one
	}
	if !ok {
		t.Errorf("nodes new: %q, want row 5's (and the history's new events)", fresh)
	}
	if got := eval[string](t, page, `String(document.getElementById("board").__mark)`); got != "board" {
		t.Errorf("the board's own node was replaced")
	}
	order := eval[[]string](t, page, `[...document.querySelectorAll("#waiting-items .title")].map(e => e.textContent)`)
	if strings.Join(order, "|") != "row 5|row 1|row 2|row 3|row 4" {
		t.Errorf("waiting: %q", order)
	}
}
