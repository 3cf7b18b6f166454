package sessions_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pickup-dev/pickup/sessions"
)

// TestListManyFilesAsParseMeta: a cold listing of more files than it reads
// on one goroutine gives each session what ParseMeta reads from its file,
// problems included, and leaves out what it cannot read (a FIFO, files in
// the way of a symlink or directory check), in the order a warm listing
// gives. Run under -race, it also checks the readers share nothing.
func TestListManyFilesAsParseMeta(t *testing.T) {
	b, err := sessions.Init(filepath.Join(t.TempDir(), "board"))
	if err != nil {
		t.Fatal(err)
	}
	todo := b.StateDir(sessions.Todo, "")
	contents := []string{
		"---\npriority: high\ntitle: plain\ntags: [a, b]\n---\n",
		"---\ntitle: |\n  block scalar, left to yaml\ncreated_at: 2026-01-02T03:04:05Z\n---\n",
		"---\npriority: urgent\n---\n",
		"---\ntitle: [broken\n---\n",
		"# no frontmatter\n",
		"---\ntitle: never closed\n",
		"",
		"---\ntitle: " + strings.Repeat("long ", 2000) + "\n---\n",
	}
	want := map[string]string{} // id: the frontmatter's reading
	for i := range 300 {
		id := fmt.Sprintf("s%03d", i)
		content := contents[i%len(contents)]
		path := filepath.Join(todo, id+".md")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := sessions.ParseMeta(strings.NewReader(content))
		if m.CreatedAt.IsZero() {
			info, serr := os.Stat(path)
			if serr != nil {
				t.Fatal(serr)
			}
			m.CreatedAt = info.ModTime().UTC()
		}
		want[id] = fmt.Sprintf("%+v %v", m, err)
	}
	if err := syscall.Mkfifo(filepath.Join(todo, "fifo.md"), 0o644); err != nil {
		t.Logf("no FIFO: %v", err)
	}

	cold, err := b.ListState(sessions.Todo, true)
	if err != nil {
		t.Fatal(err)
	}
	warm, err := b.ListState(sessions.Todo, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(cold) != len(want) || len(warm) != len(want) {
		t.Fatalf("listed %d sessions cold, %d warm; want %d", len(cold), len(warm), len(want))
	}
	for i, s := range cold {
		problem := "<nil>"
		if s.Problem != "" {
			problem = s.Problem
		}
		if got := fmt.Sprintf("%+v %s", s.Meta, problem); got != want[s.ID] {
			t.Errorf("%s: listed %s\nParseMeta reads %s", s.ID, got, want[s.ID])
		}
		if w := warm[i]; w.ID != s.ID || w.Path != s.Path || w.Problem != s.Problem {
			t.Errorf("position %d: %s cold, %s warm", i, s.ID, w.ID)
		}
	}
}
