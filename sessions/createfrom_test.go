package sessions_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pickup-dev/pickup/sessions"
)

func ptr[T any](v T) *T { return &v }

// TestCreateFrom: a file with its own frontmatter is the session, its
// fields used as written; what the override gives replaces them; pickup
// sets created_at and attempts; every other byte stays.
func TestCreateFrom(t *testing.T) {
	const created = `created_at: "2026-11-22T09:15:03Z"`
	tests := []struct {
		name string
		in   string
		o    sessions.Override
		want string // the file written
		meta sessions.Meta
	}{
		{
			name: "fields as written",
			in:   "---\npriority: high # why\ncreated_at: 2020-01-01T00:00:00Z\ntitle: T\ntags: [a, b]\ndepends_on: [x]\nextra: kept\n---\nbody\n",
			want: "---\npriority: high # why\n" + created + "\ntitle: T\ntags: [a, b]\ndepends_on: [x]\nextra: kept\n---\nbody\n",
			meta: sessions.Meta{Priority: sessions.High, Title: "T", Tags: []string{"a", "b"}, DependsOn: []string{"x"}},
		},
		{
			name: "created_at added when missing",
			in:   "---\ntitle: T\n---\n",
			want: "---\ntitle: T\n" + created + "\n---\n",
			meta: sessions.Meta{Priority: sessions.Medium, Title: "T"},
		},
		{
			name: "override replaces",
			in:   "---\npriority: high\ntitle: T\ntags:\n  - a\n  - b\ndepends_on: x\n---\n",
			o:    sessions.Override{Priority: ptr(sessions.Low), Title: ptr("it's: new"), Tags: []string{"c"}, DependsOn: []string{"y", "z"}},
			want: "---\npriority: low\ntitle: 'it''s: new'\ntags: [c]\ndepends_on: [\"y\", z]\n" + created + "\n---\n",
			meta: sessions.Meta{Priority: sessions.Low, Title: "it's: new", Tags: []string{"c"}, DependsOn: []string{"y", "z"}},
		},
		{
			name: "a title on two lines stays on one",
			in:   "---\ntitle: T\n---\n",
			o:    sessions.Override{Title: ptr("one\ntwo")},
			want: "---\ntitle: \"one\\ntwo\"\n" + created + "\n---\n",
			meta: sessions.Meta{Priority: sessions.Medium, Title: "one\ntwo"},
		},
		{
			name: "heading gives a missing title",
			in:   "---\npriority: low\n---\n# From the body\ntext\n",
			want: "---\npriority: low\n" + created + "\ntitle: From the body\n---\n# From the body\ntext\n",
			meta: sessions.Meta{Priority: sessions.Low, Title: "From the body"},
		},
		{
			name: "attempts start again",
			in:   "---\nattempts: 3\nlast_error: \"boom\"\n---\n",
			want: "---\nattempts: 0\nlast_error: \"boom\"\n" + created + "\n---\n",
			meta: sessions.Meta{Priority: sessions.Medium},
		},
		{
			name: "CRLF and a byte order mark",
			in:   "\ufeff---\r\ntitle: T\r\n---\r\nbody\r\n",
			o:    sessions.Override{Priority: ptr(sessions.Low)},
			want: "\ufeff---\r\ntitle: T\r\n" + created + "\r\npriority: low\r\n---\r\nbody\r\n",
			meta: sessions.Meta{Priority: sessions.Low, Title: "T"},
		},
		{
			name: "no frontmatter: a body, as always",
			in:   "# Heading\ntext\n",
			o:    sessions.Override{Tags: []string{"t"}},
			want: "---\npriority: medium\n" + created + "\ntitle: Heading\ntags: [t]\n---\n# Heading\ntext\n",
			meta: sessions.Meta{Priority: sessions.Medium, Title: "Heading", Tags: []string{"t"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := testBoard(t)
			s, err := b.CreateFrom("in.md", []byte(tt.in), tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if got := mustRead(t, s.Path); got != tt.want {
				t.Errorf("file:\n%s\nwant:\n%s", got, tt.want)
			}
			tt.meta.CreatedAt = boardClock.Truncate(1e9)
			if s.Priority != tt.meta.Priority || s.Title != tt.meta.Title || !s.CreatedAt.Equal(tt.meta.CreatedAt) ||
				!slices.Equal(s.Tags, tt.meta.Tags) || !slices.Equal(s.DependsOn, tt.meta.DependsOn) || s.Attempts != 0 {
				t.Errorf("meta = %+v, want %+v", s.Meta, tt.meta)
			}
			// What list reads is what CreateFrom said.
			list, err := b.List(sessions.Todo)
			if err != nil || len(list) != 1 || list[0].Title != s.Title || list[0].Priority != s.Priority || list[0].Problem != "" {
				t.Errorf("list = %+v, %v", list, err)
			}
		})
	}
}

// TestCreateFromRefuses: broken frontmatter, and tags the tag rule forbids,
// are refused with each line, and nothing is created or reserved.
func TestCreateFromRefuses(t *testing.T) {
	tests := []struct {
		name string
		in   string
		o    sessions.Override
		want string
	}{
		{"yaml syntax", "---\ntitle: x\ntags: [a\n---\n", sessions.Override{}, "f.md:3: broken frontmatter: did not find expected ',' or ']'"},
		{"never closed", "---\ntitle: x\n", sessions.Override{}, `f.md:2: broken frontmatter: frontmatter opened on line 1 is never closed: add a line "---" after it`},
		{"two problems", "---\ncreated_at: soon\npriority: urgent\n---\n", sessions.Override{},
			`f.md:2: broken frontmatter: created_at "soon" is not an RFC 3339 time such as 2026-11-22T09:15:03Z; f.md:3: broken frontmatter: priority: unknown priority "urgent": use high, medium or low`},
		{"bad dependency", "---\ndepends_on: [a/b]\n---\n", sessions.Override{}, `f.md:2: broken frontmatter: depends_on: invalid id`},
		{"a flag does not mend the file", "---\npriority: urgent\n---\n", sessions.Override{Priority: ptr(sessions.High)}, "f.md:2: broken frontmatter: priority:"},
		{"tag with a comma", "---\ntags: [\"a, b\", c]\n---\n", sessions.Override{}, `f.md:2: broken frontmatter: tags: "a, b" holds a comma, which separates tags: write tags: [a, b, c]`},
		{"empty tag", "---\ntags: [a, '']\n---\n", sessions.Override{}, "f.md:2: broken frontmatter: tags: an empty tag: remove it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := testBoard(t)
			_, err := b.CreateFrom("f.md", []byte(tt.in), tt.o)
			var fe *sessions.FrontmatterError
			if !errors.Is(err, sessions.ErrBadFrontmatter) || !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one starting %q", err, tt.want)
			}
			if fe.Problems[0].Line < 1 || !strings.Contains(fe.Hint(), "f.md") {
				t.Errorf("problems %+v, hint %q", fe.Problems, fe.Hint())
			}
			if names := dirNames(t, filepath.Join(b.Dir, "todo")); names != "" {
				t.Errorf("todo/ holds %s", names)
			}
			if _, err := os.Stat(filepath.Join(b.RuntimeDir(), "ids")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("an id was reserved: %v", err)
			}
		})
	}
}
