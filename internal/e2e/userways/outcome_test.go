package userways

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// outcome is what a drain left behind: what its workers recorded and what
// the board says.
type outcome struct {
	claims   []string       // "<worker> <id>", one per session handed out
	distinct int            // distinct ids in claims
	errors   []string       // failures the workers recorded, e.g. "w3 ID done exit 6"
	exits    map[string]int // errors per exit code ("6": claim lost)
	ops      map[string]int // events.log lines per op
	done     int            // sessions in done/
	todo     int            // sessions left in todo/
	doing    int            // sessions left in doing/*/
}

// outcome reads the claims and errors files of the work directory, the
// board's events.log and its state directories.
func (b *board) outcome() outcome {
	b.t.Helper()
	o := outcome{claims: b.lines("claims"), errors: b.lines("errors"), exits: map[string]int{}, ops: map[string]int{}}
	ids := map[string]bool{}
	for _, c := range o.claims {
		if f := strings.Fields(c); len(f) == 2 {
			ids[f[1]] = true
		}
	}
	o.distinct = len(ids)
	for _, e := range o.errors {
		if _, code, ok := strings.Cut(e, " exit "); ok {
			o.exits[code]++
		}
	}
	f, err := os.Open(filepath.Join(b.dir, "events.log"))
	if err != nil {
		b.t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev struct{ Op string }
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			b.t.Errorf("events.log: %q: %v", sc.Text(), err)
			continue
		}
		o.ops[ev.Op]++
	}
	if err := sc.Err(); err != nil {
		b.t.Fatal(err)
	}
	o.done = b.count("done", "*.md")
	o.todo = b.count("todo", "*.md")
	o.doing = b.count("doing", "*", "*.md")
	return o
}

// count counts the files of the board that match the pattern's elements.
func (b *board) count(elem ...string) int {
	m, err := filepath.Glob(filepath.Join(append([]string{b.dir}, elem...)...))
	if err != nil {
		b.t.Fatal(err)
	}
	return len(m)
}

// check logs the outcome of a drain of n sessions that took elapsed, and
// fails the test unless pickup kept its promise: each session handed out
// exactly once, no failed done (exit 6 or any other), no reap, every
// session in done/.
func (b *board) check(o outcome, n int, elapsed time.Duration) {
	t := b.t
	t.Helper()
	t.Logf("%d sessions: %d claims handed out (%d distinct), %d failures (%s), %d reaps in events.log, "+
		"done/ %d, todo/ %d, doing/ %d; %s",
		n, len(o.claims), o.distinct, len(o.errors), byCode(o.exits), o.ops["reap"], o.done, o.todo, o.doing,
		elapsed.Round(time.Millisecond))
	if len(o.claims) != n {
		t.Errorf("%d claims handed out, want %d (one per session)", len(o.claims), n)
	}
	if o.distinct != n {
		t.Errorf("%d distinct sessions claimed, want %d", o.distinct, n)
	}
	if len(o.errors) > 0 {
		t.Errorf("%d failures (%s; exit 6 is claim lost), the first: %s", len(o.errors), byCode(o.exits), strings.Join(first(o.errors, 5), "; "))
	}
	if o.ops["reap"] != 0 {
		t.Errorf("events.log records %d reaps of live workers' claims, want 0", o.ops["reap"])
	}
	if o.done != n {
		t.Errorf("done/ holds %d sessions, want %d", o.done, n)
	}
	if t.Failed() {
		if dups := duplicates(o.claims); len(dups) > 0 {
			t.Logf("handed out more than once, e.g.: %s", strings.Join(first(dups, 5), "; "))
		}
		if log := b.lines("pickup.log"); len(log) > 0 {
			t.Logf("pickup.log (%d lines), the last:\n%s", len(log), strings.Join(log[max(0, len(log)-6):], "\n"))
		}
	}
}

// byCode says how many failures had each exit code: "exit 6: 12, exit 3: 1".
func byCode(exits map[string]int) string {
	if len(exits) == 0 {
		return "none"
	}
	var parts []string
	for code, n := range exits {
		parts = append(parts, fmt.Sprintf("exit %s: %d", code, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// duplicates lists the ids claimed more than once, with who claimed them.
func duplicates(claims []string) []string {
	by := map[string][]string{}
	for _, c := range claims {
		if f := strings.Fields(c); len(f) == 2 {
			by[f[1]] = append(by[f[1]], f[0])
		}
	}
	var out []string
	for id, who := range by {
		if len(who) > 1 {
			out = append(out, id+" by "+strings.Join(who, ","))
		}
	}
	sort.Strings(out)
	return out
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
