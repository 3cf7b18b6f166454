package boardview

import (
	"fmt"

	"flag"
	"github.com/charmbracelet/x/ansi"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or writes it there with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s ./internal/boardview -update to write it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from the rendering; run with -update if the change is meant.\n--- got:\n%s\n--- want:\n%s", path, got, want)
	}
}

// checkSafe fails if s holds anything a terminal would act on: a control
// byte other than the line breaks, a bidirectional control, or bytes that
// are not UTF-8.
func checkSafe(t *testing.T, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Errorf("rendering is not valid UTF-8")
	}
	for i, r := range s {
		if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r <= 0x9f) || bidiOrSeparator(r) {
			t.Errorf("rendering holds %U at byte %d: %q", r, i, s[max(i-20, 0):min(i+20, len(s))])
			return
		}
	}
}

// bidiOrSeparator lists, independently of the code under test, the
// characters that reorder or break a line.
func bidiOrSeparator(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) ||
		(r >= 0x2066 && r <= 0x2069) || r == 0x2028 || r == 0x2029
}

func TestViewGolden(t *testing.T) {
	for _, size := range []struct{ w, h int }{{120, 40}, {80, 24}, {40, 20}} {
		t.Run(sizeName(size.w, size.h), func(t *testing.T) {
			s := New(fixture())
			u := &UI{Selected: "2026-11-27_11-05-00"}
			got := Render(s, u, Options{Width: size.w, Height: size.h, Now: now})
			checkSafe(t, got)
			lines := strings.Split(got, "\n")
			if len(lines) != size.h {
				t.Errorf("%d lines, want %d", len(lines), size.h)
			}
			for i, l := range lines {
				if w := displayWidth(l); w != size.w {
					t.Errorf("line %d is %d wide, want %d: %q", i+1, w, size.w, l)
				}
			}
			golden(t, "board-"+sizeName(size.w, size.h)+".golden", got+"\n")
		})
	}
}

func TestViewColorIsEscapedToo(t *testing.T) {
	s := New(fixture())
	got := Render(s, &UI{}, Options{Width: 120, Height: 40, Now: now, Color: true})
	// The styles' own sequences are SGR only (ESC [ ... m); anything else
	// came from the agents' text.
	rest := got
	for {
		i := strings.IndexByte(rest, 0x1b)
		if i < 0 {
			break
		}
		end := strings.IndexByte(rest[i:], 'm')
		seq := rest[i:]
		if end >= 0 {
			seq = rest[i : i+end+1]
		}
		if end < 0 || !strings.HasPrefix(seq, "\x1b[") || strings.ContainsAny(seq[2:len(seq)-1], "\x1b\x07]") {
			t.Fatalf("a sequence that is not a style: %q", seq)
		}
		rest = rest[i+end+1:]
	}
	if !strings.Contains(got, "✗ DEAD") {
		t.Errorf("the dead owner does not stand out")
	}
}

func TestOnceGolden(t *testing.T) {
	s := New(fixture())
	got := Plain(s, &UI{}, Options{Width: 120, Height: 40, Now: now})
	checkSafe(t, got)
	golden(t, "once.golden", got)
}

func TestDetailAndHelpGolden(t *testing.T) {
	s := New(fixture())
	u := &UI{Selected: "2026-11-27_09-30-00"}
	Render(s, u, Options{Width: 80, Height: 24, Now: now})
	if a := u.Key(s, now, "enter"); a != Open {
		t.Fatalf("enter: action %v, want Open", a)
	}
	it, _ := s.Item(u.Selected)
	u.Detail.Text = "---\ntitle: \"" + it.Title + "\"\n---\n\tbody \x1b]52;c;eA==\x07 line\n"
	u.Detail.History = s.History()[len(s.History())-2:]
	got := Render(s, u, Options{Width: 80, Height: 24, Now: now})
	checkSafe(t, got)
	golden(t, "detail-80x24.golden", got+"\n")
	u.Key(s, now, "esc")
	u.Key(s, now, "?")
	got = Render(s, u, Options{Width: 80, Height: 24, Now: now})
	golden(t, "help-80x24.golden", got+"\n")
}

func sizeName(w, h int) string { return fmt.Sprintf("%dx%d", w, h) }

func displayWidth(s string) int { return ansi.StringWidth(s) }

// TestViewDatabaseUnreachableGolden: a PostgreSQL board whose database
// stopped answering says so on its status line, since when, and keeps
// the last view; a good read clears it.
func TestViewDatabaseUnreachableGolden(t *testing.T) {
	snap := fixture()
	snap.Shared = "postgres://pickup@db.example.com/work"
	s := New(snap)
	s.Apply(FeedStatus{At: ago(90 * time.Second), DBErr: "failed to connect to `user=pickup database=work`: dial tcp 10.0.0.5:5432: connect: connection refused\x1b]2;pwned\x07"},
		FeedStatus{At: ago(30 * time.Second), DBErr: "dial tcp 10.0.0.5:5432: connect: connection refused"})
	got := Render(s, &UI{}, Options{Width: 120, Height: 30, Now: now})
	checkSafe(t, got)
	golden(t, "board-pg-unreachable-120x30.golden", got+"\n")
	s.Apply(FeedStatus{At: now, Fetched: now})
	if why := staleWhy(s); why != "" {
		t.Errorf("after the database answered: stale warning %q", why)
	}
}

// TestSnapshotDatabaseUnreachable: a board started while its database
// does not answer says so from its first screen.
func TestSnapshotDatabaseUnreachable(t *testing.T) {
	snap := fixture()
	snap.Watching, snap.DBErr = true, "connection refused"
	s := New(snap)
	if why := staleWhy(s); !strings.Contains(why, "database unreachable since "+snap.At.Format("15:04:05")) {
		t.Errorf("stale warning %q", why)
	}
}
