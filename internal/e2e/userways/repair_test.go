package userways

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestRepairBesideWork runs `pickup doctor --fix` in loops beside agents
// (issue 22): ./repair.sh churns 20 sessions with claim/release loops,
// drains 80 others with next/done loops, and runs two `doctor --fix`
// loops and a plain `doctor` loop for a few seconds. Then every session
// must be in exactly one place on the board (none deleted, none moved to
// conflicts/: there never was a duplicate), every doctor run must have
// found the board healthy (a session that moved between two directory
// reads is not "a move that was interrupted"), and every done must have
// succeeded.
//
// Before the move guard, the duplicate fix deleted 14 of 20 churned
// sessions in 60 s and 30 of 79 doctor runs beside a drain reported a
// false "hardlink … move was interrupted".
func TestRepairBesideWork(t *testing.T) {
	if testing.Short() {
		t.Skip("starts thousands of processes")
	}
	ctx := testContext(t)
	b := newBoard(t)
	b.install("repair.sh")
	var churn []string
	for i := 0; i < 20; i++ {
		churn = append(churn, strings.TrimSpace(b.pickup(ctx, "new", "--tag", "churn", "--title", "churned")))
	}
	drain := b.seed(ctx, 80)
	if err := os.WriteFile(filepath.Join(b.work, "churn"), []byte(strings.Join(churn, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.run(ctx, []string{"DUR=6"}, "./repair.sh"); err != nil {
		t.Fatal(err)
	}

	places := boardPlaces(t, b.dir)
	for _, id := range append(append([]string(nil), churn...), drain...) {
		switch ps := places[id]; len(ps) {
		case 1:
		case 0:
			t.Errorf("session %s is gone from the board (conflicts/ holds %v)", id, conflictsOf(t, b.dir, id))
		default:
			t.Errorf("session %s is in %d places: %v", id, len(ps), ps)
		}
	}
	if cs := conflictsOf(t, b.dir, ""); len(cs) > 0 {
		t.Errorf("doctor --fix moved %d file(s) to conflicts/ though no session was ever duplicated: %v", len(cs), cs)
	}
	runs, unhealthy := 0, 0
	for _, line := range b.lines("doctor-exits") {
		name, code, _ := strings.Cut(line, " ")
		runs++
		if code == "0" {
			continue
		}
		unhealthy++
		if unhealthy <= 3 {
			t.Errorf("%s exited %s beside agents at work:\n%s", name, code, b.file(name))
		}
	}
	if unhealthy > 0 {
		t.Errorf("%d of %d doctor runs reported a problem on a healthy board", unhealthy, runs)
	}
	if runs < 6 {
		t.Errorf("only %d doctor runs: the test proves nothing", runs)
	}
	if errs := b.lines("errors"); len(errs) > 0 {
		t.Errorf("done failed %d time(s): %v", len(errs), errs)
	}
	if strings.Contains(b.file("pickup.log"), "panic") {
		t.Errorf("pickup panicked:\n%s", b.file("pickup.log"))
	}
	t.Logf("%d doctor runs beside 3 claim/release loops and a 4-loop drain", runs)
}

// boardPlaces maps each session id to the places (state/owner) that hold
// a file of it.
func boardPlaces(t *testing.T, dir string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	add := func(rel string) {
		entries, err := os.ReadDir(filepath.Join(dir, rel))
		if err != nil {
			if !os.IsNotExist(err) {
				t.Fatal(err)
			}
			return
		}
		for _, e := range entries {
			if id, ok := strings.CutSuffix(e.Name(), ".md"); ok && !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				out[id] = append(out[id], rel)
			}
		}
	}
	add("todo")
	add("done")
	add("failed")
	owners, _ := os.ReadDir(filepath.Join(dir, "doing"))
	for _, o := range owners {
		if o.IsDir() {
			add("doing/" + o.Name())
		}
	}
	return out
}

// conflictsOf lists conflicts/ (only the files of session id, unless id is
// "").
func conflictsOf(t *testing.T, dir, id string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "conflicts"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if id == "" || strings.HasPrefix(e.Name(), id+".") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}
