package sessions_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/pickup-dev/pickup/sessions"
)

var idPattern = regexp.MustCompile(`^\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d$`)

func TestCreate(t *testing.T) {
	b := testBoard(t)
	var got []sessions.Session
	for i := range 3 {
		s, err := b.Create(sessions.Meta{Priority: sessions.Low, Title: fmt.Sprintf("session %d", i), Tags: []string{"t"}}, []byte("body\n"))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if !idPattern.MatchString(got[0].ID) {
		t.Errorf("id %q does not match %v", got[0].ID, idPattern)
	}
	want := []string{"2026-11-22_09-15-03", "2026-11-22_09-15-03-2", "2026-11-22_09-15-03-3"}
	if !slices.Equal(ids(got), want) {
		t.Fatalf("ids = %q, want %q", ids(got), want)
	}
	for i, s := range got {
		if s.State != sessions.Todo || s.Path != b.Path(sessions.Todo, "", want[i]) {
			t.Errorf("session %d: state %q path %q, want todo at %s", i, s.State, s.Path, b.Path(sessions.Todo, "", want[i]))
		}
		if !s.CreatedAt.Equal(boardClock.Truncate(time.Second)) {
			t.Errorf("session %d: CreatedAt = %v, want %v", i, s.CreatedAt, boardClock.Truncate(time.Second))
		}
		f, err := os.Open(s.Path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := sessions.ParseMeta(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", s.Path, err)
		}
		wantMeta := sessions.Meta{Priority: sessions.Low, Title: fmt.Sprintf("session %d", i), Tags: []string{"t"}, CreatedAt: boardClock.Truncate(time.Second)}
		if d := sameMeta(m, wantMeta); d != "" {
			t.Errorf("%s: %s", s.Path, d)
		}
		if content := mustRead(t, s.Path); !strings.HasSuffix(content, "\n---\nbody\n") {
			t.Errorf("%s does not end with the body: %q", s.Path, content)
		}
	}
}

func TestCreateIDIsUTC(t *testing.T) {
	b := testBoard(t)
	b.Now = func() time.Time { return time.Date(2026, 11, 22, 10, 15, 3, 0, time.FixedZone("CET", 3600)) }
	s, err := b.Create(sessions.Meta{Priority: sessions.Medium}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != "2026-11-22_09-15-03" {
		t.Errorf("id = %q, want the UTC time 2026-11-22_09-15-03", s.ID)
	}
}

func TestCreateKeepsCreatedAt(t *testing.T) {
	b := testBoard(t)
	at := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	s, err := b.Create(sessions.Meta{Priority: sessions.Medium, CreatedAt: at}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != "2026-11-22_09-15-03" {
		t.Errorf("id = %q: the id is the creation time, not created_at", s.ID)
	}
	list, err := b.List(sessions.Todo)
	if err != nil || len(list) != 1 || !list[0].CreatedAt.Equal(at) {
		t.Errorf("List = %+v, %v; want one session created at %v", list, err, at)
	}
}

func TestCreateRejectsBadDependency(t *testing.T) {
	b := testBoard(t)
	_, err := b.Create(sessions.Meta{Priority: sessions.Medium, DependsOn: []string{"ok", "../escape"}}, nil)
	if !errors.Is(err, sessions.ErrInvalidID) {
		t.Fatalf("Create with depends_on ../escape = %v, want ErrInvalidID", err)
	}
	if list, _ := b.List(); len(list) != 0 {
		t.Errorf("a session was created anyway: %v", ids(list))
	}
}

// TestCreateConcurrent has 64 goroutines create sessions in the same second:
// every one gets its own id and its own file.
func TestCreateConcurrent(t *testing.T) {
	const n = 64
	b := testBoard(t)
	b.NoSync = true
	got := make([]string, n)
	var g errgroup.Group
	for i := range n {
		g.Go(func() error {
			s, err := b.Create(sessions.Meta{Priority: sessions.Medium, Title: fmt.Sprintf("writer %d", i)}, []byte(fmt.Sprintf("body %d\n", i)))
			if err != nil {
				return fmt.Errorf("writer %d: %w", i, err)
			}
			got[i] = s.ID
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	// The ids taken are exactly the first n candidates of the second.
	var want []string
	for i := range n {
		if i == 0 {
			want = append(want, "2026-11-22_09-15-03")
		} else {
			want = append(want, fmt.Sprintf("2026-11-22_09-15-03-%d", i+1))
		}
	}
	slices.Sort(want)
	sorted := slices.Sorted(slices.Values(got))
	if !slices.Equal(sorted, want) {
		t.Fatalf("ids = %q\nwant %q", sorted, want)
	}
	entries, err := os.ReadDir(filepath.Join(b.Dir, "todo"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != n {
		t.Errorf("todo/ holds %d entries, want %d", len(entries), n)
	}
	titles := map[string]bool{}
	for i, id := range got {
		content := mustRead(t, b.Path(sessions.Todo, "", id))
		m, err := sessions.ParseMeta(strings.NewReader(content))
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		if want := fmt.Sprintf("writer %d", i); m.Title != want || !strings.HasSuffix(content, fmt.Sprintf("body %d\n", i)) {
			t.Errorf("%s holds %q, want writer %d's session", id, m.Title, i)
		}
		titles[m.Title] = true
	}
	if len(titles) != n {
		t.Errorf("%d distinct sessions on disk, want %d", len(titles), n)
	}
}

// TestCreateSkipsExistingFiles checks that ids already on the board (placed
// by hand, or by a merge) are skipped and never overwritten.
func TestCreateSkipsExistingFiles(t *testing.T) {
	tests := []struct {
		name   string
		placed []string // files placed by hand, relative to the board
		want   string
	}{
		{name: "in todo", placed: []string{"todo/2026-11-22_09-15-03.md"}, want: "2026-11-22_09-15-03-2"},
		{name: "in done", placed: []string{"done/2026-11-22_09-15-03.md"}, want: "2026-11-22_09-15-03-2"},
		{name: "in doing", placed: []string{"doing/bob/2026-11-22_09-15-03.md"}, want: "2026-11-22_09-15-03-2"},
		{name: "first two taken", placed: []string{"todo/2026-11-22_09-15-03.md", "done/2026-11-22_09-15-03-2.md"}, want: "2026-11-22_09-15-03-3"},
		{name: "gap", placed: []string{"todo/2026-11-22_09-15-03-2.md"}, want: "2026-11-22_09-15-03"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := testBoard(t)
			for _, p := range tt.placed {
				put(t, b, p, "placed by hand: "+p+"\n")
			}
			s, err := b.Create(sessions.Meta{Priority: sessions.High, Title: "new"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if s.ID != tt.want {
				t.Errorf("id = %q, want %q", s.ID, tt.want)
			}
			for _, p := range tt.placed {
				if got := mustRead(t, filepath.Join(b.Dir, p)); got != "placed by hand: "+p+"\n" {
					t.Errorf("%s was overwritten: %q", p, got)
				}
			}
		})
	}
}

func reservationHours(t *testing.T, b *sessions.Board) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(b.RuntimeDir(), "ids"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestCreateForgetsOldReservations(t *testing.T) {
	b := testBoard(t)
	at := func(d time.Duration) func() time.Time {
		return func() time.Time { return boardClock.Add(d) }
	}
	create := func(d time.Duration) string {
		t.Helper()
		b.Now = at(d)
		s, err := b.Create(sessions.Meta{Priority: sessions.Medium}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s.ID
	}
	first := create(0)
	reservation := filepath.Join(b.RuntimeDir(), "ids", "2026-11-22_09", first)
	if _, err := os.Stat(reservation); err != nil {
		t.Fatalf("no reservation for %s: %v", first, err)
	}
	// Unrelated entries of ids/ are left alone.
	put(t, b, ".pickup/ids/README", "not a reservation hour\n")
	put(t, b, ".pickup/ids/old/x", "not an hour\n")

	steps := []struct {
		name  string
		after time.Duration
		want  []string
	}{
		{name: "one hour later the reservation is kept", after: time.Hour, want: []string{"2026-11-22_09", "2026-11-22_10", "README", "old"}},
		{name: "two hours later it is kept", after: 2 * time.Hour, want: []string{"2026-11-22_09", "2026-11-22_10", "2026-11-22_11", "README", "old"}},
		{name: "three hours later it is forgotten", after: 3 * time.Hour, want: []string{"2026-11-22_10", "2026-11-22_11", "2026-11-22_12", "README", "old"}},
		{name: "a day later all are forgotten", after: 27 * time.Hour, want: []string{"2026-11-23_12", "README", "old"}},
	}
	for _, st := range steps {
		create(st.after)
		if got := reservationHours(t, b); !slices.Equal(got, st.want) {
			t.Errorf("%s: ids/ holds %q, want %q", st.name, got, st.want)
		}
	}

	// With the reservation forgotten and the clock set back, the id on the
	// board still guards against a duplicate.
	if again := create(0); again != first+"-2" {
		t.Errorf("after the clock went back, Create = %q, want %q", again, first+"-2")
	}
}
