package sessions_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/pickup-dev/pickup/sessions"
)

// boardClock is the fixed time of the board tests: ids are
// 2026-11-22_09-15-03, -2, -3...
var boardClock = time.Date(2026, 11, 22, 9, 15, 3, 123456789, time.UTC)

// testBoard initializes a board in a temporary directory with a fixed clock.
func testBoard(t *testing.T) *sessions.Board {
	t.Helper()
	b, err := sessions.Init(filepath.Join(t.TempDir(), "board"))
	if err != nil {
		t.Fatal(err)
	}
	b.Now = func() time.Time { return boardClock }
	return b
}

// put writes content at <board>/rel, creating directories.
func put(t *testing.T, b *sessions.Board, rel, content string) string {
	t.Helper()
	p := filepath.Join(b.Dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func ids(list []sessions.Session) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.ID
	}
	return out
}

func TestInit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b", "board")
	b, err := sessions.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b.Dir != dir {
		t.Errorf("Dir = %q, want %q", b.Dir, dir)
	}
	for _, sub := range []string{"todo", "doing", "done", ".pickup"} {
		if info, err := os.Stat(filepath.Join(dir, sub)); err != nil || !info.IsDir() {
			t.Errorf("%s: not a directory after Init: %v", sub, err)
		}
	}
	ignore := filepath.Join(dir, ".pickup", ".gitignore")
	if got := mustRead(t, ignore); !strings.Contains(got, "\n*\n") {
		t.Errorf(".pickup/.gitignore = %q, want it to ignore everything", got)
	}

	// Files of every kind survive a second Init.
	session := put(t, b, "todo/2026-01-01_00-00-00.md", "---\ntitle: keep\n---\n")
	claimed := put(t, b, "doing/alice/2026-01-01_00-00-01.md", "claimed\n")
	if err := os.WriteFile(ignore, []byte("# edited by hand\n*\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b2, err := sessions.Init(dir)
	if err != nil {
		t.Fatalf("second Init: %v", err)
	}
	if b2.Dir != b.Dir {
		t.Errorf("second Init Dir = %q, want %q", b2.Dir, b.Dir)
	}
	for path, want := range map[string]string{
		session: "---\ntitle: keep\n---\n",
		claimed: "claimed\n",
		ignore:  "# edited by hand\n*\n",
	} {
		if got := mustRead(t, path); got != want {
			t.Errorf("%s after a second Init = %q, want %q", path, got, want)
		}
	}
}

func TestInitCompletesPartialBoard(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "todo"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := sessions.Open(dir); !errors.Is(err, sessions.ErrNoBoard) {
		t.Fatalf("Open(partial board) = %v, want ErrNoBoard", err)
	}
	if _, err := sessions.Init(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := sessions.Open(dir); err != nil {
		t.Fatalf("Open after Init: %v", err)
	}
}

func TestInitOnAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sessions.Init(file); err == nil {
		t.Fatal("Init on a regular file succeeded")
	}
}

func TestOpen(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string)
		wantErr error
	}{
		{name: "board", setup: func(t *testing.T, dir string) {
			if _, err := sessions.Init(dir); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "board without .pickup", setup: func(t *testing.T, dir string) {
			for _, s := range []string{"todo", "doing", "done"} {
				if err := os.MkdirAll(filepath.Join(dir, s), 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{name: "missing directory", setup: func(t *testing.T, dir string) {
			if err := os.Remove(dir); err != nil {
				t.Fatal(err)
			}
		}, wantErr: sessions.ErrNoBoard},
		{name: "empty directory", setup: func(*testing.T, string) {}, wantErr: sessions.ErrNoBoard},
		{name: "done missing", setup: func(t *testing.T, dir string) {
			for _, s := range []string{"todo", "doing"} {
				if err := os.MkdirAll(filepath.Join(dir, s), 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}, wantErr: sessions.ErrNoBoard},
		{name: "todo is a file", setup: func(t *testing.T, dir string) {
			for _, s := range []string{"doing", "done"} {
				if err := os.MkdirAll(filepath.Join(dir, s), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "todo"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, wantErr: sessions.ErrNoBoard},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "board")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			tt.setup(t, dir)
			b, err := sessions.Open(dir)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Open = %v, want an error matching %v", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), dir) {
					t.Errorf("error %q does not name %s", err, dir)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if b.Dir != dir {
				t.Errorf("Dir = %q, want %q", b.Dir, dir)
			}
		})
	}
}

func TestOpenRelative(t *testing.T) {
	dir := t.TempDir()
	if _, err := sessions.Init(filepath.Join(dir, "board")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	b, err := sessions.Open("board")
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(b.Dir) {
		t.Errorf("Dir = %q, want an absolute path", b.Dir)
	}
}

func TestValidateName(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool // valid
	}{
		{name: "one letter", in: "a", want: true},
		{name: "one digit", in: "7", want: true},
		{name: "all classes", in: "A.b_c-1", want: true},
		{name: "id", in: "2026-11-22_09-15-03", want: true},
		{name: "id with suffix", in: "2026-11-22_09-15-03-2", want: true},
		{name: "trailing dot", in: "a.", want: true},
		{name: "128 characters", in: strings.Repeat("a", 128), want: true},
		{name: "empty", in: "", want: false},
		{name: "dotfile", in: ".x", want: false},
		{name: "dot", in: ".", want: false},
		{name: "dot dot", in: "..", want: false},
		{name: "leading dash", in: "-x", want: false},
		{name: "leading underscore", in: "_x", want: false},
		{name: "slash", in: "a/b", want: false},
		{name: "backslash", in: `a\b`, want: false},
		{name: "NUL", in: "a\x00b", want: false},
		{name: "space", in: "a b", want: false},
		{name: "newline", in: "a\n", want: false},
		{name: "colon", in: "a:b", want: false},
		{name: "at", in: "user@host", want: false},
		{name: "129 characters", in: strings.Repeat("a", 129), want: false},
		{name: "non-ASCII", in: "é", want: false},
		{name: "non-ASCII later", in: "caf\u00e9", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, v := range []struct {
				kind     string
				validate func(string) error
			}{{"ValidateID", sessions.ValidateID}, {"ValidateOwner", sessions.ValidateOwner}} {
				err := v.validate(tt.in)
				if got := err == nil; got != tt.want {
					t.Errorf("%s(%q) = %v, want valid %v", v.kind, tt.in, err, tt.want)
				}
				if err != nil && !errors.Is(err, sessions.ErrInvalidID) {
					t.Errorf("%s(%q) = %v, want an error matching ErrInvalidID", v.kind, tt.in, err)
				}
			}
		})
	}
}

func TestSanitizeOwner(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "valid stays", in: "alice", want: "alice"},
		{name: "valid with punctuation stays", in: "A.b_c-1", want: "A.b_c-1"},
		{name: "user at host", in: "alice@box", want: "alice-box"},
		{name: "uuid", in: "0f8fad5b-d9cb-469f-a165-70867728950e", want: "0f8fad5b-d9cb-469f-a165-70867728950e"},
		{name: "leading dot", in: ".alice", want: "alice"},
		{name: "leading dashes", in: "--alice", want: "alice"},
		{name: "leading underscore", in: "_www@box", want: "www-box"},
		{name: "leading junk then dot", in: "@.x", want: "x"},
		{name: "leading junk then underscore", in: "__svc@box", want: "svc-box"},
		{name: "slash", in: "a/b", want: "a-b"},
		{name: "spaces", in: "John Smith", want: "John-Smith"},
		{name: "non-ASCII", in: "josé", want: "jos--"},
		{name: "empty", in: "", want: "anonymous"},
		{name: "only junk", in: "@@@", want: "anonymous"},
		{name: "only non-ASCII", in: "é", want: "anonymous"},
		{name: "too long", in: strings.Repeat("a", 200), want: strings.Repeat("a", 128)},
		{name: "too long after trimming", in: "-" + strings.Repeat("b", 130), want: strings.Repeat("b", 128)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sessions.SanitizeOwner(tt.in)
			if got != tt.want {
				t.Errorf("SanitizeOwner(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if err := sessions.ValidateOwner(got); err != nil {
				t.Errorf("SanitizeOwner(%q) = %q, which is not a valid owner: %v", tt.in, got, err)
			}
		})
	}
}

// TestSanitizeOwnerAlwaysValid checks every two-byte prefix: whatever the
// input, the result is a valid owner name.
func TestSanitizeOwnerAlwaysValid(t *testing.T) {
	var bad []string
	for a := range 256 {
		for _, b := range []byte{'.', '_', '-', '@', 'x', 0, 0xff} {
			in := string([]byte{byte(a), b}) + "name"
			if got := sessions.SanitizeOwner(in); sessions.ValidateOwner(got) != nil {
				bad = append(bad, fmt.Sprintf("%q -> %q", in, got))
			}
		}
	}
	if len(bad) > 0 {
		t.Errorf("SanitizeOwner returned %d invalid owner names, e.g. %s", len(bad), strings.Join(bad[:min(len(bad), 5)], ", "))
	}
}

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

func TestLocate(t *testing.T) {
	const id = "2026-01-01_00-00-00"
	tests := []struct {
		name  string
		files []string // relative to the board
		links []string // symlinks to a session file
		dirs  []string
		want  []string // "state/owner"
	}{
		{name: "nowhere"},
		{name: "todo", files: []string{"todo/" + id + ".md"}, want: []string{"todo/"}},
		{name: "doing", files: []string{"doing/alice/" + id + ".md"}, want: []string{"doing/alice"}},
		{name: "done", files: []string{"done/" + id + ".md"}, want: []string{"done/"}},
		{
			name:  "everywhere",
			files: []string{"todo/" + id + ".md", "doing/alice/" + id + ".md", "doing/bob/" + id + ".md", "done/" + id + ".md"},
			want:  []string{"todo/", "doing/alice", "doing/bob", "done/"},
		},
		{name: "another id", files: []string{"todo/" + id + "-2.md", "todo/" + id + ".md.bak", "todo/." + id + ".md"}},
		{name: "symlink is not a session", links: []string{"todo/" + id + ".md"}},
		{name: "directory is not a session", dirs: []string{"done/" + id + ".md"}},
		{name: "invalid owner directory", files: []string{"doing/.hidden/" + id + ".md", "doing/-x/" + id + ".md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := testBoard(t)
			for _, f := range tt.files {
				put(t, b, f, "---\ntitle: x\n---\n")
			}
			target := put(t, b, "elsewhere.md", "---\ntitle: target\n---\n")
			for _, l := range tt.links {
				if err := os.Symlink(target, filepath.Join(b.Dir, l)); err != nil {
					t.Fatal(err)
				}
			}
			for _, d := range tt.dirs {
				if err := os.MkdirAll(filepath.Join(b.Dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			places, err := b.Locate(id)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range places {
				got = append(got, string(p.State)+"/"+p.Owner)
				if want := b.Path(p.State, p.Owner, id); p.Path != want {
					t.Errorf("place %s/%s: Path = %q, want %q", p.State, p.Owner, p.Path, want)
				}
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tt.want))
			if !slices.Equal(got, want) {
				t.Errorf("Locate = %q, want %q", got, want)
			}
		})
	}
}

func TestLocateInvalidID(t *testing.T) {
	b := testBoard(t)
	for _, id := range []string{"", "../todo/x", ".x", "a/b"} {
		if _, err := b.Locate(id); !errors.Is(err, sessions.ErrInvalidID) {
			t.Errorf("Locate(%q) = %v, want ErrInvalidID", id, err)
		}
	}
}

func TestOwners(t *testing.T) {
	b := testBoard(t)
	for _, d := range []string{"alice", "bob.2", "0f8fad5b-d9cb", ".hidden", "-dash", "with space"} {
		if err := os.MkdirAll(filepath.Join(b.Dir, "doing", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	put(t, b, "doing/carol", "a file, not an owner\n")
	put(t, b, "doing/x.md", "a session dropped in doing/ itself\n")
	if err := os.Symlink(filepath.Join(b.Dir, "doing", "alice"), filepath.Join(b.Dir, "doing", "mallory")); err != nil {
		t.Fatal(err)
	}
	got, err := b.Owners()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{"0f8fad5b-d9cb", "alice", "bob.2"}
	if !slices.Equal(got, want) {
		t.Errorf("Owners = %q, want %q", got, want)
	}
}

func TestPaths(t *testing.T) {
	b := &sessions.Board{Dir: "/b"}
	tests := []struct {
		name  string
		state sessions.State
		owner string
		want  string
	}{
		{name: "todo", state: sessions.Todo, want: "/b/todo/x.md"},
		{name: "todo ignores owner", state: sessions.Todo, owner: "alice", want: "/b/todo/x.md"},
		{name: "doing", state: sessions.Doing, owner: "alice", want: "/b/doing/alice/x.md"},
		{name: "done", state: sessions.Done, want: "/b/done/x.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := b.Path(tt.state, tt.owner, "x"); got != filepath.FromSlash(tt.want) {
				t.Errorf("Path = %q, want %q", got, tt.want)
			}
		})
	}
	if got := b.RuntimeDir(); got != filepath.FromSlash("/b/.pickup") {
		t.Errorf("RuntimeDir = %q", got)
	}
}

func TestParseState(t *testing.T) {
	for _, st := range sessions.States {
		if got, err := sessions.ParseState(string(st)); err != nil || got != st {
			t.Errorf("ParseState(%q) = %q, %v", st, got, err)
		}
	}
	for _, bad := range []string{"", "TODO", "doing/", "finished"} {
		if _, err := sessions.ParseState(bad); err == nil {
			t.Errorf("ParseState(%q) succeeded", bad)
		}
	}
}

// session renders a session file by hand.
func session(prio, created, title string) string {
	return fmt.Sprintf("---\npriority: %s\ncreated_at: %s\ntitle: %q\n---\nbody\n", prio, created, title)
}

func TestListOrder(t *testing.T) {
	b := testBoard(t)
	files := map[string]string{
		"todo/c.md":  session("low", "2026-01-01T00:00:00Z", "low, oldest"),
		"todo/d.md":  session("high", "2026-03-01T00:00:00Z", "high, newest"),
		"todo/e.md":  session("high", "2026-02-01T00:00:00Z", "high, older"),
		"todo/b2.md": session("medium", "2026-02-01T00:00:00Z", "medium, same time, id b2"),
		"todo/b1.md": session("medium", "2026-02-01T00:00:00Z", "medium, same time, id b1"),
		"todo/a.md":  session("medium", "2026-02-02T00:00:00Z", "medium, later"),
	}
	for p, c := range files {
		put(t, b, p, c)
	}
	want := []string{"e", "d", "b1", "b2", "a", "c"}
	for _, validate := range []bool{true, false} {
		for round := range 2 { // the second round comes from the cache
			list, err := b.ListState(sessions.Todo, validate)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(list); !slices.Equal(got, want) {
				t.Errorf("ListState(todo, %v) round %d = %q, want %q", validate, round, got, want)
			}
		}
	}
}

func TestCompare(t *testing.T) {
	t1, t2 := utc("2026-01-01T00:00:00Z"), utc("2026-01-02T00:00:00Z")
	s := func(id string, p sessions.Priority, at time.Time) sessions.Session {
		return sessions.Session{ID: id, Meta: sessions.Meta{Priority: p, CreatedAt: at}}
	}
	tests := []struct {
		name string
		a, b sessions.Session
		want int
	}{
		{name: "priority first", a: s("z", sessions.High, t2), b: s("a", sessions.Low, t1), want: -1},
		{name: "priority reversed", a: s("a", sessions.Low, t1), b: s("z", sessions.Medium, t2), want: 1},
		{name: "then created_at", a: s("z", sessions.Medium, t1), b: s("a", sessions.Medium, t2), want: -1},
		{name: "then id", a: s("a", sessions.Medium, t1), b: s("b", sessions.Medium, t1), want: -1},
		{name: "equal", a: s("a", sessions.Medium, t1), b: s("a", sessions.Medium, t1), want: 0},
		{name: "same instant in another zone", a: s("b", sessions.Medium, t1.In(time.FixedZone("X", 7200))), b: s("a", sessions.Medium, t1), want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sessions.Compare(tt.a, tt.b); got != tt.want {
				t.Errorf("Compare = %d, want %d", got, tt.want)
			}
			if got := sessions.Compare(tt.b, tt.a); got != -tt.want {
				t.Errorf("Compare reversed = %d, want %d", got, -tt.want)
			}
		})
	}
}

func TestListStates(t *testing.T) {
	b := testBoard(t)
	put(t, b, "todo/t1.md", session("low", "2026-01-01T00:00:00Z", "t1"))
	put(t, b, "todo/t2.md", session("high", "2026-01-01T00:00:00Z", "t2"))
	put(t, b, "doing/alice/a1.md", session("low", "2026-01-01T00:00:00Z", "a1"))
	put(t, b, "doing/bob/b1.md", session("high", "2026-01-01T00:00:00Z", "b1"))
	put(t, b, "done/d1.md", session("medium", "2026-01-01T00:00:00Z", "d1"))
	if err := os.Mkdir(filepath.Join(b.Dir, "doing", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		states []sessions.State
		want   []string // id@state/owner
	}{
		{name: "all", want: []string{"t2@todo/", "t1@todo/", "b1@doing/bob", "a1@doing/alice", "d1@done/"}},
		{name: "todo", states: []sessions.State{sessions.Todo}, want: []string{"t2@todo/", "t1@todo/"}},
		{name: "doing", states: []sessions.State{sessions.Doing}, want: []string{"b1@doing/bob", "a1@doing/alice"}},
		{name: "done and todo", states: []sessions.State{sessions.Done, sessions.Todo}, want: []string{"d1@done/", "t2@todo/", "t1@todo/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := b.List(tt.states...)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range list {
				got = append(got, s.ID+"@"+string(s.State)+"/"+s.Owner)
				if want := b.Path(s.State, s.Owner, s.ID); s.Path != want {
					t.Errorf("%s: Path = %q, want %q", s.ID, s.Path, want)
				}
				if s.Title != s.ID {
					t.Errorf("%s: Title = %q", s.ID, s.Title)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("List(%v) = %q, want %q", tt.states, got, tt.want)
			}
		})
	}
	owned, err := b.ListOwner("alice")
	if err != nil || !slices.Equal(ids(owned), []string{"a1"}) {
		t.Errorf("ListOwner(alice) = %q, %v; want [a1]", ids(owned), err)
	}
	if none, err := b.ListOwner("nobody"); err != nil || len(none) != 0 {
		t.Errorf("ListOwner(nobody) = %q, %v; want nothing and no error", ids(none), err)
	}
}

// TestListSkipsNonSessions checks that only regular files named <id>.md
// are listed.
func TestListSkipsNonSessions(t *testing.T) {
	b := testBoard(t)
	content := session("high", "2026-01-01T00:00:00Z", "x")
	put(t, b, "todo/real.md", content)
	put(t, b, "done/real2.md", content)
	for _, name := range []string{
		".hidden.md",                     // dotfile
		".real.md123456789",              // WriteNew's temporary file
		".real.md",                       // dotfile named like a session
		"notes.txt",                      // not .md
		"README",                         // no extension
		"real.md~",                       // editor backup
		"real.MD",                        // wrong case
		".md",                            // empty id
		"-dash.md",                       // invalid id
		"with space.md",                  // invalid id
		"caf\u00e9.md",                   // invalid id
		strings.Repeat("a", 129) + ".md", // too long
	} {
		put(t, b, "todo/"+name, content)
	}
	if err := os.Mkdir(filepath.Join(b.Dir, "todo", "dir.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	put(t, b, "todo/dir.md/inner.md", content)
	if err := os.Symlink(filepath.Join(b.Dir, "done", "real2.md"), filepath.Join(b.Dir, "todo", "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere.md", filepath.Join(b.Dir, "todo", "dangling.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(b.Dir, "todo", "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A symlinked owner directory is not an owner.
	if err := os.Symlink(filepath.Join(b.Dir, "todo"), filepath.Join(b.Dir, "doing", "mallory")); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		list, err := b.List()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ids(list), []string{"real", "real2"}; !slices.Equal(got, want) {
			t.Errorf("round %d: List = %q, want %q", round, got, want)
		}
	}
}

// A missing state directory (a clone drops empty ones, and Open no longer
// makes them) reads as empty.
func TestListMissingStateDir(t *testing.T) {
	b := testBoard(t)
	if err := os.Remove(filepath.Join(b.Dir, "done")); err != nil {
		t.Fatal(err)
	}
	if list, err := b.List(sessions.Done); err != nil || len(list) != 0 {
		t.Errorf("List(done) without done/ = %v, %v; want nothing", list, err)
	}
	if _, err := b.List(sessions.Todo); err != nil {
		t.Errorf("List(todo) = %v", err)
	}
}

func TestListBrokenFrontmatter(t *testing.T) {
	b := testBoard(t)
	p := put(t, b, "todo/broken.md", "---\ntitle: ok\npriority: urgent\n---\n")
	if err := os.Chtimes(p, time.Time{}, utc("2025-05-05T05:05:05Z")); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		list, err := b.List(sessions.Todo)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 {
			t.Fatalf("round %d: List = %q, want the broken session listed", round, ids(list))
		}
		s := list[0]
		if !strings.Contains(s.Problem, "line 3") || s.Priority != sessions.Medium {
			t.Errorf("round %d: Problem = %q, Priority = %v; want line 3 named and medium", round, s.Problem, s.Priority)
		}
		if !s.CreatedAt.Equal(utc("2025-05-05T05:05:05Z")) {
			t.Errorf("round %d: CreatedAt = %v, want the file's modification time", round, s.CreatedAt)
		}
	}
}

func TestRead(t *testing.T) {
	b := testBoard(t)
	content := session("low", "2026-01-01T00:00:00Z", "read me") + "more body\n"
	put(t, b, "doing/alice/x.md", content)
	s, got, err := b.Read(sessions.Place{State: sessions.Doing, Owner: "alice", Path: b.Path(sessions.Doing, "alice", "x")})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != content {
		t.Errorf("content = %q, want %q", got, content)
	}
	if s.ID != "x" || s.State != sessions.Doing || s.Owner != "alice" || s.Title != "read me" || s.Priority != sessions.Low {
		t.Errorf("Read = %+v", s)
	}
	if err := os.Symlink(b.Path(sessions.Doing, "alice", "x"), b.Path(sessions.Todo, "", "y")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Read(sessions.Place{State: sessions.Todo, Path: b.Path(sessions.Todo, "", "y")}); err == nil {
		t.Error("Read followed a symlink")
	}
	if _, _, err := b.Read(sessions.Place{State: sessions.Todo, Path: filepath.Join(b.Dir, "todo", ".y.md")}); !errors.Is(err, sessions.ErrInvalidID) {
		t.Errorf("Read(.y.md) = %v, want ErrInvalidID", err)
	}
}
