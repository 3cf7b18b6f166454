package cli

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/sessions"
)

// Without a shared board, claims are exclusive within one clone only: a
// pull may bring another clone's resolution that takes a claim made here
// away (a doctor --fix elsewhere that kept the other copy), or a second
// claim of the same session. The sync says so, naming the sessions: it is
// the only signal such a clone gets.

// movedClaim is a claim held in this clone that a pull removed or moved,
// or that a pull doubled (the session is now claimed in two places).
type movedClaim struct {
	ID    string   `json:"id"`
	Owner string   `json:"owner"`           // who held it here
	Now   []string `json:"now"`             // where the session is after the pull: "doing/b2", "done", ...; empty: nowhere
	Twice bool     `json:"twice,omitempty"` // still here, and now claimed elsewhere too
}

// claimWatch finds the commits each attempt's pull brought in: from HEAD
// after the pending changes were committed (Prepare) to HEAD before the
// next Prepare, or at the end.
type claimWatch struct {
	repo   *gitx.Repo
	board  *sessions.Board
	from   string      // HEAD after the last Prepare
	pulled [][2]string // commit ranges that pulls brought in
}

func newClaimWatch(repo *gitx.Repo, b *sessions.Board) *claimWatch {
	return &claimWatch{repo: repo, board: b}
}

// prepare wraps the Syncer's Prepare.
func (w *claimWatch) prepare(next func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		w.ended(ctx)
		err := next(ctx)
		w.from = w.repo.Head(ctx)
		return err
	}
}

// ended closes the range of the last attempt's pull.
func (w *claimWatch) ended(ctx context.Context) {
	if w.from == "" {
		return
	}
	if now := w.repo.Head(ctx); now != "" && now != w.from {
		w.pulled = append(w.pulled, [2]string{w.from, now})
	}
	w.from = ""
}

// moved returns the claims that the pulls removed, moved or doubled.
func (w *claimWatch) moved(ctx context.Context) []movedClaim {
	w.ended(ctx)
	prefix, err := w.repo.Rel(w.board.Dir)
	if err != nil || len(w.pulled) == 0 {
		return nil
	}
	doing := path.Join(prefix, string(sessions.Doing))
	type key struct{ id, owner string }
	gone, added := map[key]bool{}, map[key]bool{}
	for _, r := range w.pulled {
		out, err := w.repo.Run(ctx, "diff", "--name-status", "--no-renames", "-z", r[0], r[1], "--", doing)
		if err != nil {
			continue
		}
		f := strings.Split(out, "\x00")
		for i := 0; i+1 < len(f); i += 2 {
			rel, ok := strings.CutPrefix(f[i+1], doing+"/")
			owner, name, ok2 := strings.Cut(rel, "/")
			id, ok3 := sessions.IsSessionName(name)
			if !ok || !ok2 || !ok3 {
				continue
			}
			switch f[i] {
			case "D":
				gone[key{id, owner}] = true
			case "A":
				added[key{id, owner}] = true
			}
		}
	}
	var out []movedClaim
	where := func(id string) (names []string, places []sessions.Place) {
		places, _ = w.board.Locate(id)
		for _, p := range places {
			n := string(p.State)
			if p.State == sessions.Doing {
				n += "/" + p.Owner
			}
			names = append(names, n)
		}
		sort.Strings(names)
		return names, places
	}
	for k := range gone {
		if added[k] {
			continue // moved away and back
		}
		now, _ := where(k.id)
		out = append(out, movedClaim{ID: k.id, Owner: k.owner, Now: now})
	}
	for k := range added {
		if gone[k] {
			continue
		}
		now, places := where(k.id)
		for _, p := range places {
			if p.State == sessions.Doing && p.Owner != k.owner {
				out = append(out, movedClaim{ID: k.id, Owner: p.Owner, Now: now, Twice: true})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ID != out[j].ID {
			return out[i].ID < out[j].ID
		}
		return out[i].Owner < out[j].Owner
	})
	return out
}

// warnMoved prints the claims a sync's pulls took away or doubled.
func (r *run) warnMoved(moved []movedClaim) {
	if len(moved) == 0 {
		return
	}
	var lost, twice []string
	for _, m := range moved {
		if m.Twice {
			var also []string
			for _, n := range m.Now {
				if n != "doing/"+m.Owner {
					also = append(also, n)
				}
			}
			twice = append(twice, fmt.Sprintf("%s (held here by %s, now also in %s)", m.ID, m.Owner, strings.Join(also, ", ")))
			continue
		}
		now := "is nowhere on the board any more (see conflicts/)"
		if len(m.Now) > 0 {
			now = "is now in " + strings.Join(m.Now, ", ")
		}
		lost = append(lost, fmt.Sprintf("%s, held here by %s, %s", m.ID, m.Owner, now))
	}
	if len(lost) > 0 {
		fmt.Fprintf(r.env.Stderr, "pickup: warning: the pull took %d claim(s) of this clone away: %s\n", len(lost), sanitize(strings.Join(lost, "; ")))
		fmt.Fprintf(r.env.Stderr, "pickup: hint: another clone's history won (claims are exclusive only within one clone unless the board is shared: `pickup init --shared`); those owners must stop working on them: their `pickup done` now fails; run `pickup log ID` to see why\n")
	}
	if len(twice) > 0 {
		fmt.Fprintf(r.env.Stderr, "pickup: warning: after the pull, %d session(s) are claimed twice: %s\n", len(twice), sanitize(strings.Join(twice, "; ")))
		fmt.Fprintf(r.env.Stderr, "pickup: hint: run `pickup doctor --fix`: it keeps the claim that came first by events.log and fences the other owner\n")
	}
}
