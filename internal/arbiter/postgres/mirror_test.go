package postgres

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/sessions"
)

const raceID = "2026-11-27_15-26-13"

// mirrorBoard is a board with session raceID in todo/, which its view
// shows there at version 4 (no database: these tests drive the mirror's
// steps themselves, in the order two processes of one clone can take them).
func mirrorBoard(t *testing.T) *Board {
	t.Helper()
	b, err := sessions.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b.NoSync = true
	s := &Board{B: b, URL: "postgres://test/db", Host: "h"}
	if err := fsx.WriteNew(b.Path(sessions.Todo, "", raceID), []byte("---\ntitle: x\n---\nv4\n"), 0o644, false); err != nil {
		t.Fatal(err)
	}
	s.see(raceID, "todo", 4, 0)
	return s
}

// places lists every place of the session on the board (Locate walks
// todo/, doing/*/, done/, failed/).
func places(t *testing.T, s *Board, id string) []string {
	t.Helper()
	ps, err := s.B.Locate(id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range ps {
		out = append(out, place(string(p.State), p.Owner))
	}
	sort.Strings(out)
	return out
}

// claimHere is a local claim by owner: the rename that the arbiter then
// sends to the database.
func claimHere(t *testing.T, s *Board, owner string) sessions.Event {
	t.Helper()
	src, dst := s.B.Path(sessions.Todo, "", raceID), s.B.Path(sessions.Doing, owner, raceID)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fsx.RenameNoReplace(src, dst); err != nil {
		t.Fatal(err)
	}
	return sessions.Event{ID: raceID, Op: "next", From: "todo", To: "doing/" + owner, Owner: owner, Src: src, Dst: dst}
}

func placeLocked(t *testing.T, s *Board, r Row, from string, onlyFrom bool) {
	t.Helper()
	unlock, err := s.lock()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if err := s.placeRow(r, from, onlyFrom); err != nil {
		t.Fatal(err)
	}
}

// TestLostAfterNewerRefresh is the interleaving behind a drain that ended
// with a session both in done/ and in doing/c0-w2/ of one clone: process A
// of clone c1 claims the session here (todo/ → doing/c1-w1/) while c0-w2
// has it in the database (version 5) and has finished it since (done,
// version 6). Process B of c1 refreshes: it found the file in todo/ (as its
// view has it) before A's rename, and places it after. Then A's arbiter
// learns it lost, with the database's answer to its move: doing/c0-w2 at
// version 5, older than what B recorded. Each session must end in exactly
// one place, the one the newest row names.
func TestLostAfterNewerRefresh(t *testing.T) {
	s := mirrorBoard(t)
	todo := s.B.Path(sessions.Todo, "", raceID)
	body := []byte("---\ntitle: x\n---\nv6\n")
	done := Row{ID: raceID, State: "done", Version: 6, Fence: 9, LastOp: "done", LastBy: "c0-w2", Body: body}
	c0w2 := Row{ID: raceID, State: "doing", Owner: "c0-w2", Version: 5, Fence: 9, LastOp: "next", LastBy: "c0-w2", Body: []byte("---\ntitle: x\n---\nv4\n")}

	e := claimHere(t, s, "c1-w1")                                   // A's rename, without the mirror lock
	placeLocked(t, s, done, todo, true)                             // B's Refresh, which saw the file in todo/
	err := s.lost(e, Response{Lost: true, Found: true, Row: &c0w2}) // A's answer
	if !errors.Is(err, arbiter.ErrSessionNotAvailable) {
		t.Fatalf("lost: %v, want ErrSessionNotAvailable", err)
	}
	got := places(t, s, raceID)
	if len(got) != 1 {
		t.Fatalf("the session is in %v on the board; want exactly one place", got)
	}
	// Whichever place it is in, the view says that place: a later Refresh
	// (the database now at done, version 6) then puts it in done/.
	unlock, _ := s.lock()
	v := s.loadView().row(raceID)
	unlock()
	if v.Place != got[0] {
		t.Fatalf("the session is in %s but the view says %s (version %d): no Refresh would ever move it", got[0], v.Place, v.Version)
	}
}

// TestPlaceStaleRow: whatever the path, a row older than the view never
// puts the session back: the loser's copy goes where the newer row put
// the session, or is dropped if that place has it already.
func TestPlaceStaleRow(t *testing.T) {
	for _, tc := range []struct {
		name       string
		newerThere bool
	}{
		{"newer place has it", true},
		{"newer place empty", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mirrorBoard(t)
			e := claimHere(t, s, "c1-w1")
			if tc.newerThere {
				if err := fsx.WriteNew(s.B.Path(sessions.Done, "", raceID), []byte("v6"), 0o644, false); err != nil {
					t.Fatal(err)
				}
			}
			s.see(raceID, "done", 6, 9)
			c0w2 := Row{ID: raceID, State: "doing", Owner: "c0-w2", Version: 5, Fence: 9, LastOp: "next", LastBy: "c0-w2"}
			_ = s.lost(e, Response{Lost: true, Found: true, Row: &c0w2})
			if got := places(t, s, raceID); len(got) != 1 || got[0] != "done" {
				t.Fatalf("the session is in %v; want [done]", got)
			}
		})
	}
}

// TestRefreshLeavesMovedSession: a Refresh that found the session where its
// view had it, and finds it gone when it places it (a local transition
// moved it meanwhile), leaves it to that transition's arbiter: writing the
// database's row beside the moved file would make a second copy.
func TestRefreshLeavesMovedSession(t *testing.T) {
	s := mirrorBoard(t)
	todo := s.B.Path(sessions.Todo, "", raceID)
	done := Row{ID: raceID, State: "done", Version: 6, Fence: 9, LastOp: "done", LastBy: "c0-w2", Body: []byte("v6")}
	e := claimHere(t, s, "c1-w1")
	placeLocked(t, s, done, todo, true)
	if got := places(t, s, raceID); len(got) != 1 || got[0] != "doing/c1-w1" {
		t.Fatalf("after the Refresh the session is in %v; want [doing/c1-w1] (the claim's arbiter decides)", got)
	}
	_ = s.lost(e, Response{Lost: true, Found: true, Row: &done})
	if got := places(t, s, raceID); len(got) != 1 || got[0] != "done" {
		t.Fatalf("after the lost claim the session is in %v; want [done]", got)
	}
}

// TestSyncSetsAsideCopies: a board that shows a session twice (done/, as
// its view and the database have it, and doing/c0-w2/, left by the race
// above before it was fixed) keeps the database's place and moves the
// other copy to conflicts/ at pickup sync; a session whose view is not
// current, or whose database place has no file, is not touched.
func TestSyncSetsAsideCopies(t *testing.T) {
	done := Row{ID: raceID, State: "done", Version: 6, Fence: 9}
	for _, tc := range []struct {
		name      string
		viewVer   int64
		doneThere bool
		want      []string
	}{
		{"current view", 6, true, []string{"done"}},
		{"view behind", 5, true, []string{"doing/c0-w2", "done"}},
		{"database place empty", 6, false, []string{"doing/c0-w2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mirrorBoard(t)
			stray := s.B.Path(sessions.Doing, "c0-w2", raceID)
			_ = os.MkdirAll(filepath.Dir(stray), 0o755)
			if err := os.Rename(s.B.Path(sessions.Todo, "", raceID), stray); err != nil {
				t.Fatal(err)
			}
			if tc.doneThere {
				if err := fsx.WriteNew(s.B.Path(sessions.Done, "", raceID), []byte("v6"), 0o644, false); err != nil {
					t.Fatal(err)
				}
			}
			s.see(raceID, "done", tc.viewVer, 9)
			if _, err := s.setAsideCopies([]Row{done}); err != nil {
				t.Fatal(err)
			}
			got := places(t, s, raceID)
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("the session is in %v; want %v", got, tc.want)
			}
			aside, _ := filepath.Glob(filepath.Join(s.B.Dir, sessions.ConflictsDirName, raceID+"*"))
			if moved := len(tc.want) == 1 && tc.doneThere; moved != (len(aside) == 1) {
				t.Fatalf("conflicts/ holds %v", aside)
			}
		})
	}
}
