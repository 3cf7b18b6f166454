package sessions_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

var lineRefRE = regexp.MustCompile(`line (\d+)`)

// badFrontmatter is garbage that must give an error naming a line, never a
// panic. line is the line the error must name (0: any line).
var badFrontmatter = []struct {
	name string
	in   string
	line int
}{
	{"unclosed", "---\ntitle: a\npriority: high\n", 0},
	{"unclosed, body only", "---\n# Heading\n\nSome text and no end.\n", 0},
	{"invalid YAML", "---\ntitle: [a, b\n---\nbody\n", 2},
	{"invalid YAML mapping", "---\ntitle: a\n  b: : c\n---\n", 3},
	{"tab indentation", "---\ntitle: a\n\tpriority: high\n---\n", 3},
	{"binary bytes", "---\ntitle: a\x00\x01\x02b\n---\n", 2},
	{"binary bytes on line 3", "---\ntitle: a\ntags: \x07\x1b[2J\n---\n", 3},
	{"invalid UTF-8", "---\ntitle: \xff\xfe\xfd\n---\n", 2},
	{"priority: urgent", "---\ntitle: a\npriority: urgent\n---\n", 3},
	{"created_at: yesterday", "---\ncreated_at: yesterday\n---\n", 2},
	{"attempts not a number", "---\nattempts: many\n---\n", 2},
	{"tags is a map", "---\ntags: {a: b}\n---\n", 2},
	{"frontmatter is a list", "---\n- a\n- b\n---\n", 2},
	{"depends_on escapes", "---\ndepends_on: [../../etc/passwd]\n---\n", 2},
	{"bad !!binary", "---\ntitle: !!binary zz\n---\n", 2},
	{"key without name", "---\n:\n---\n", 2},
	{"100 KB frontmatter", "---\n" + strings.Repeat("note: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", 100<<10/38) + "---\nbody\n", 0},
	{"100 KB line", "---\ntitle: " + strings.Repeat("a", 100<<10) + "\n---\n", 2},
}

func TestBadFrontmatterNamesALine(t *testing.T) {
	for _, tt := range badFrontmatter {
		t.Run(tt.name, func(t *testing.T) {
			m, err := sessions.ParseMeta(strings.NewReader(tt.in))
			if err == nil {
				t.Fatalf("ParseMeta = %+v, nil error; want an error", m)
			}
			ref := lineRefRE.FindStringSubmatch(err.Error())
			switch {
			case ref == nil:
				t.Errorf("error %q names no line", err)
			case tt.line != 0 && ref[1] != fmt.Sprint(tt.line):
				t.Errorf("error %q names line %s, want line %d", err, ref[1], tt.line)
			}
			if m.Priority != sessions.Medium {
				t.Errorf("broken frontmatter gave priority %v, want the default medium", m.Priority)
			}
		})
	}
}

// TestBadFrontmatterStillListed: a session with broken frontmatter is
// listed (and so claimable), with Problem saying what is wrong.
func TestBadFrontmatterStillListed(t *testing.T) {
	b, err := sessions.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i, tt := range badFrontmatter {
		id := fmt.Sprintf("bad-%02d", i)
		want[id] = tt.name
		if err := os.WriteFile(b.Path(sessions.Todo, "", id), []byte(tt.in), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(b.Path(sessions.Todo, "", "good"), []byte("---\ntitle: fine\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, pass := range []string{"cold", "cached"} {
		list, err := b.List()
		if err != nil {
			t.Fatalf("%s List: %v", pass, err)
		}
		seen := map[string]bool{}
		for _, s := range list {
			seen[s.ID] = true
			name, bad := want[s.ID]
			switch {
			case bad && s.Problem == "":
				t.Errorf("%s: %s (%s) listed without a Problem", pass, s.ID, name)
			case !bad && s.Problem != "":
				t.Errorf("%s: %s listed with Problem %q", pass, s.ID, s.Problem)
			}
		}
		if len(seen) != len(want)+1 || !seen["good"] {
			t.Errorf("%s List returned %d sessions, want %d", pass, len(seen), len(want)+1)
		}
		for id, name := range want {
			if !seen[id] {
				t.Errorf("%s: %s (%s) not listed", pass, id, name)
			}
		}
	}
}

// failAfter returns data, then fails: a reader of a file whose body cannot
// be read.
type failAfter struct {
	data []byte
	read int
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.read >= len(f.data) {
		return 0, errors.New("read past the head: the body must not be read")
	}
	n := copy(p, f.data[f.read:])
	f.read += n
	return n, nil
}

func TestBadInputHugeSessionReadsOnlyTheHead(t *testing.T) {
	head := "---\ntitle: huge\npriority: high\n---\n"
	t.Run("ParseMeta stops at the frontmatter", func(t *testing.T) {
		r := &failAfter{data: append([]byte(head), bytes.Repeat([]byte("body line\n"), 7<<10)...)} // 70 KB
		m, err := sessions.ParseMeta(r)
		if err != nil || m.Title != "huge" || m.Priority != sessions.High {
			t.Fatalf("ParseMeta = %+v, %v; want title huge, priority high", m, err)
		}
		if r.read > sessions.MaxFrontmatter {
			t.Errorf("ParseMeta read %d bytes, more than MaxFrontmatter (%d)", r.read, sessions.MaxFrontmatter)
		}
	})
	t.Run("List of a 50 MB session", func(t *testing.T) {
		b, err := sessions.Init(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(b.Path(sessions.Todo, "", "huge"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.WriteString(head + "# Huge\n")
		if err == nil {
			err = f.Truncate(50 << 20) // sparse: 50 MB of NUL bytes after the head
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		list, err := b.List(sessions.Todo)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || list[0].ID != "huge" || list[0].Title != "huge" || list[0].Problem != "" {
			t.Fatalf("List = %+v, want the one session huge with its title", list)
		}
		s, err := claim.New(b, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.Next(context.Background()); err != nil || got.ID != "huge" {
			t.Fatalf("Next = %v, %v; want huge", got.ID, err)
		}
	})
}

// TestBadInputOddFilesInTodo: symlinks, FIFOs and directories named like sessions
// are never listed, never claimed by next, and never block.
func TestBadInputOddFilesInTodo(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, todo, outside string)
	}{
		{"symlink to a file outside the board", func(t *testing.T, todo, outside string) {
			if err := os.Symlink(outside, filepath.Join(todo, "link.md")); err != nil {
				t.Fatal(err)
			}
		}},
		{"relative symlink out of the board", func(t *testing.T, todo, outside string) {
			rel, err := filepath.Rel(todo, outside)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(rel, filepath.Join(todo, "rel.md")); err != nil {
				t.Fatal(err)
			}
		}},
		{"FIFO", func(t *testing.T, todo, _ string) {
			if err := syscall.Mkfifo(filepath.Join(todo, "x.md"), 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		}},
		{"directory", func(t *testing.T, todo, _ string) {
			if err := os.Mkdir(filepath.Join(todo, "y.md"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(todo, "y.md", "inner.md"), []byte("---\ntitle: inner\n---\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			b, err := sessions.Init(filepath.Join(root, "board"))
			if err != nil {
				t.Fatal(err)
			}
			outside := filepath.Join(root, "outside.md")
			content := []byte("---\ntitle: outside the board\npriority: high\n---\nsecret\n")
			if err := os.WriteFile(outside, content, 0o644); err != nil {
				t.Fatal(err)
			}
			todo := b.StateDir(sessions.Todo, "")
			tt.make(t, todo, outside)
			before := dirNames(t, todo)

			done := make(chan error, 1)
			go func() {
				list, err := b.List()
				if err == nil && len(list) != 0 {
					err = fmt.Errorf("List returned %d sessions, first %s at %s; want none", len(list), list[0].ID, list[0].Path)
				}
				if err == nil {
					_, err = b.Check(false)
				}
				if err == nil {
					c, _ := claim.New(b, "alice")
					var s sessions.Session
					s, err = c.Next(context.Background())
					if !errors.Is(err, claim.ErrNothingAvailable) {
						err = fmt.Errorf("Next = %s, %v; want ErrNothingAvailable", s.ID, err)
					} else {
						err = nil
					}
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("List, Check or Next blocked on the file for 30 s")
			}
			if got := dirNames(t, todo); got != before {
				t.Errorf("todo/ changed: %s, was %s", got, before)
			}
			if got, err := os.ReadFile(outside); err != nil || !bytes.Equal(got, content) {
				t.Errorf("the file outside the board changed (err %v)", err)
			}
		})
	}
}

func dirNames(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name()+":"+e.Type().String())
	}
	return strings.Join(names, " ")
}

func TestBadIDsRejected(t *testing.T) {
	tests := []struct {
		name string
		id   string
	}{
		{"slash", "a/b"},
		{"dot-dot", ".."},
		{"escape", "../x"},
		{"NUL", "a\x00b"},
		{"300 chars", strings.Repeat("x", 300)},
		{"129 chars", strings.Repeat("x", 129)},
		{"empty", ""},
		{"leading dot", ".x"},
		{"backslash", `a\b`},
	}
	b, err := sessions.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := sessions.ValidateID(tt.id); !errors.Is(err, sessions.ErrInvalidID) {
				t.Errorf("ValidateID(%q) = %v, want ErrInvalidID", tt.id, err)
			}
			if places, err := b.Locate(tt.id); !errors.Is(err, sessions.ErrInvalidID) || places != nil {
				t.Errorf("Locate(%q) = %v, %v; want ErrInvalidID", tt.id, places, err)
			}
		})
	}
	if err := sessions.ValidateID(strings.Repeat("x", 128)); err != nil {
		t.Errorf("ValidateID of 128 characters: %v, want nil", err)
	}
}

// TestBadInputFrontmatterVariantsAreRead: the frontmatter forms readHead
// accepts (a byte-order mark, a "..." end line, CRLF) must give their
// metadata, not silently fall back to the defaults.
func TestBadInputFrontmatterVariantsAreRead(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"plain", "---\ntitle: x\npriority: high\n---\nbody\n"},
		{"CRLF", "---\r\ntitle: x\r\npriority: high\r\n---\r\nbody\r\n"},
		{"byte-order mark", "\ufeff---\ntitle: x\npriority: high\n---\nbody\n"},
		{"YAML document end", "---\ntitle: x\npriority: high\n...\nbody\n"},
		{"trailing spaces on the delimiters", "--- \ntitle: x\npriority: high\n---  \nbody\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := sessions.ParseMeta(strings.NewReader(tt.in))
			if err != nil || m.Title != "x" || m.Priority != sessions.High {
				t.Errorf("ParseMeta = title %q priority %v, %v; want title x, priority high", m.Title, m.Priority, err)
			}
		})
	}
}

// FuzzParseMeta: ParseMeta never panics and every error names a line.
func FuzzParseMeta(f *testing.F) {
	for _, tt := range badFrontmatter {
		f.Add([]byte(tt.in))
	}
	f.Add([]byte("---\ntitle: x\n---\n"))
	f.Add([]byte("# just a heading\n"))
	f.Add([]byte(""))
	f.Add([]byte("---\na: &a [*a, *a]\nb: &b [*a, *a]\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := sessions.ParseMeta(bytes.NewReader(data))
		if err != nil && !strings.Contains(err.Error(), "line ") {
			t.Errorf("ParseMeta(%q): error %q names no line", data, err)
		}
	})
}
