package sessions_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/sessions"
)

func TestSetField(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		key, value string
		want       string
	}{
		{
			name: "replace keeps every other byte",
			in: "---\n# a comment\ntitle: \"Keep: me\"   # trailing comment\nowner_note: keep me\npriority: low\n" +
				"zzz: last\n---\n# Body\npriority: low\n---\nmore\n",
			key: "priority", value: "high",
			want: "---\n# a comment\ntitle: \"Keep: me\"   # trailing comment\nowner_note: keep me\npriority: high\n" +
				"zzz: last\n---\n# Body\npriority: low\n---\nmore\n",
		},
		{
			name: "replace first key",
			in:   "---\npriority: low\ntitle: T\n---\n",
			key:  "priority", value: "high",
			want: "---\npriority: high\ntitle: T\n---\n",
		},
		{
			name: "replace last key",
			in:   "---\ntitle: T\nattempts: 1\n---\nbody",
			key:  "attempts", value: "2",
			want: "---\ntitle: T\nattempts: 2\n---\nbody",
		},
		{
			name: "replace an indented list",
			in:   "---\ntags:\n  - a\n  - b\ntitle: T\n---\n",
			key:  "tags", value: "[c]",
			want: "---\ntags: [c]\ntitle: T\n---\n",
		},
		{
			name: "replace a list at column 0",
			in:   "---\ntags:\n- a\n- b\ntitle: T\n---\n",
			key:  "tags", value: "[c]",
			want: "---\ntags: [c]\ntitle: T\n---\n",
		},
		{
			name: "replace a block scalar",
			in:   "---\ntitle: |\n  line one\n  line two\npriority: low\n---\nbody\n",
			key:  "title", value: "New",
			want: "---\ntitle: New\npriority: low\n---\nbody\n",
		},
		{
			name: "replace a folded scalar before the closing line",
			in:   "---\npriority: low\ntitle: >-\n  folded\n\ttabbed\n---\nbody\n",
			key:  "title", value: "New",
			want: "---\npriority: low\ntitle: New\n---\nbody\n",
		},
		{
			name: "replace a block scalar with a blank line",
			in:   "---\ntitle: |\n  paragraph one\n\n  paragraph two\npriority: low\n---\n",
			key:  "title", value: "New",
			want: "---\ntitle: New\npriority: low\n---\n",
		},
		{
			name: "replace a plain multi-line scalar",
			in:   "---\ntitle: a long\n  title\npriority: low\n---\n",
			key:  "title", value: "New",
			want: "---\ntitle: New\npriority: low\n---\n",
		},
		{
			name: "add a missing key before the closing line",
			in:   "---\ntitle: T\n# comment\n---\nbody\n",
			key:  "attempts", value: "1",
			want: "---\ntitle: T\n# comment\nattempts: 1\n---\nbody\n",
		},
		{
			name: "add to an empty frontmatter",
			in:   "---\n---\nbody\n",
			key:  "attempts", value: "1",
			want: "---\nattempts: 1\n---\nbody\n",
		},
		{
			name: "a longer key is another key",
			in:   "---\nattempts_max: 5\n---\n",
			key:  "attempts", value: "1",
			want: "---\nattempts_max: 5\nattempts: 1\n---\n",
		},
		{
			name: "a nested key is another key",
			in:   "---\nmeta:\n  attempts: 5\n---\n",
			key:  "attempts", value: "1",
			want: "---\nmeta:\n  attempts: 5\nattempts: 1\n---\n",
		},
		{
			name: "the key in the body is not touched",
			in:   "---\ntitle: T\n---\nattempts: 9\n",
			key:  "attempts", value: "1",
			want: "---\ntitle: T\nattempts: 1\n---\nattempts: 9\n",
		},
		{
			name: "closed by ...",
			in:   "---\ntitle: T\n...\nbody\n",
			key:  "attempts", value: "1",
			want: "---\ntitle: T\nattempts: 1\n...\nbody\n",
		},
		{
			name: "BOM kept",
			in:   "\ufeff---\npriority: low\n---\nbody\n",
			key:  "priority", value: "high",
			want: "\ufeff---\npriority: high\n---\nbody\n",
		},
		{
			name: "CRLF body kept",
			in:   "---\r\ntitle: T\r\n---\r\nbody\r\n",
			key:  "attempts", value: "1",
			want: "---\r\ntitle: T\r\nattempts: 1\n---\r\nbody\r\n",
		},
		{
			name: "no frontmatter",
			in:   "# Heading\n\nbody\n",
			key:  "attempts", value: "1",
			want: "---\nattempts: 1\n---\n# Heading\n\nbody\n",
		},
		{
			name: "empty file",
			in:   "",
			key:  "attempts", value: "1",
			want: "---\nattempts: 1\n---\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sessions.SetField([]byte(tt.in), tt.key, tt.value)
			if err != nil {
				t.Fatalf("SetField: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("SetField(%q, %q, %q) =\n%q\nwant\n%q", tt.in, tt.key, tt.value, got, tt.want)
			}
			if _, err := sessions.ParseMeta(strings.NewReader(string(got))); err != nil {
				t.Errorf("the result does not parse: %v", err)
			}
		})
	}
}

// TestSetFieldParses checks what ParseMeta reads back after SetField.
func TestSetFieldParses(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		key, value string
		want       sessions.Meta
	}{
		{
			name: "attempts added",
			in:   string(sessions.Render(sessions.Meta{Priority: sessions.Low, Title: "t", Tags: []string{"a"}}, []byte("body\n"))),
			key:  "attempts", value: "3",
			want: sessions.Meta{Priority: sessions.Low, Title: "t", Tags: []string{"a"}, Attempts: 3},
		},
		{
			name: "multi-line title replaced",
			in:   string(sessions.Render(sessions.Meta{Priority: sessions.High, Title: "one\n\ntwo"}, nil)),
			key:  "title", value: "'one line'",
			want: sessions.Meta{Priority: sessions.High, Title: "one line"},
		},
		{
			name: "tags replaced",
			in:   "---\ntags:\n  - a\n  - b\npriority: low\n---\n",
			key:  "tags", value: "[c, d]",
			want: sessions.Meta{Priority: sessions.Low, Tags: []string{"c", "d"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := sessions.SetField([]byte(tt.in), tt.key, tt.value)
			if err != nil {
				t.Fatal(err)
			}
			got, err := sessions.ParseMeta(strings.NewReader(string(out)))
			if err != nil {
				t.Fatalf("ParseMeta: %v\n%s", err, out)
			}
			got.CreatedAt = time.Time{}
			if d := sameMeta(got, tt.want); d != "" {
				t.Errorf("%s\n%s", d, out)
			}
		})
	}
}

func TestSetFieldBrokenFrontmatter(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{name: "never closed", in: "---\ntitle: T\n"},
		{name: "too long", in: "---\n" + strings.Repeat("x: y\n", sessions.MaxFrontmatter/5+1) + "---\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := sessions.SetField([]byte(tt.in), "attempts", "1"); err == nil {
				t.Errorf("SetField = %.40q, nil; want an error rather than a guess", got)
			}
		})
	}
}
