package sessions_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/sessions"
)

func TestParsePriority(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    sessions.Priority
		wantErr bool
	}{
		{name: "high", in: "high", want: sessions.High},
		{name: "medium", in: "medium", want: sessions.Medium},
		{name: "low", in: "low", want: sessions.Low},
		{name: "upper case", in: "HIGH", want: sessions.High},
		{name: "mixed case", in: "Low", want: sessions.Low},
		{name: "spaces", in: "  low\t", want: sessions.Low},
		{name: "empty is medium", in: "", want: sessions.Medium},
		{name: "unknown", in: "urgent", want: sessions.Medium, wantErr: true},
		{name: "prefix", in: "hi", want: sessions.Medium, wantErr: true},
		{name: "number", in: "1", want: sessions.Medium, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sessions.ParsePriority(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParsePriority(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), tt.in) {
				t.Errorf("error %q does not quote the input %q", err, tt.in)
			}
			if got != tt.want {
				t.Errorf("ParsePriority(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestPriorityString(t *testing.T) {
	tests := []struct {
		name string
		p    sessions.Priority
		want string
	}{
		{name: "high", p: sessions.High, want: "high"},
		{name: "medium", p: sessions.Medium, want: "medium"},
		{name: "low", p: sessions.Low, want: "low"},
		{name: "out of range", p: sessions.Priority(7), want: "medium"},
		{name: "below range", p: sessions.Priority(-7), want: "medium"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			text, err := tt.p.MarshalText()
			if err != nil || string(text) != tt.want {
				t.Errorf("MarshalText() = %q, %v; want %q", text, err, tt.want)
			}
			var back sessions.Priority
			if err := back.UnmarshalText(text); err != nil || back.String() != tt.want {
				t.Errorf("UnmarshalText(%q) = %v, %v", text, back, err)
			}
		})
	}
}

// sameMeta reports how got differs from want ("" if it does not).
func sameMeta(got, want sessions.Meta) string {
	var diffs []string
	if got.Priority != want.Priority {
		diffs = append(diffs, "priority "+got.Priority.String()+", want "+want.Priority.String())
	}
	if !got.CreatedAt.Equal(want.CreatedAt) {
		diffs = append(diffs, "created_at "+got.CreatedAt.String()+", want "+want.CreatedAt.String())
	}
	if !got.CreatedAt.IsZero() && got.CreatedAt.Location() != time.UTC {
		diffs = append(diffs, "created_at is in "+got.CreatedAt.Location().String()+", want UTC")
	}
	if got.Title != want.Title {
		diffs = append(diffs, "title "+strconvQuote(got.Title)+", want "+strconvQuote(want.Title))
	}
	if !slices.Equal(got.Tags, want.Tags) {
		diffs = append(diffs, "tags "+strconvQuote(strings.Join(got.Tags, "|"))+", want "+strconvQuote(strings.Join(want.Tags, "|")))
	}
	if !slices.Equal(got.DependsOn, want.DependsOn) {
		diffs = append(diffs, "depends_on "+strconvQuote(strings.Join(got.DependsOn, "|"))+", want "+strconvQuote(strings.Join(want.DependsOn, "|")))
	}
	if got.Attempts != want.Attempts {
		diffs = append(diffs, "attempts differ")
	}
	return strings.Join(diffs, "; ")
}

func strconvQuote(s string) string {
	return "\"" + strings.ReplaceAll(strings.ReplaceAll(s, "\n", `\n`), "\"", `\"`) + "\""
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestParseMeta(t *testing.T) {
	medium := sessions.Meta{Priority: sessions.Medium}
	tests := []struct {
		name string
		in   string
		want sessions.Meta
	}{
		{
			name: "full frontmatter",
			in: "---\npriority: high\ncreated_at: 2026-11-22T09:15:03Z\ntitle: Fix the parser\n" +
				"tags: [parser, cli]\ndepends_on: [2026-11-20_08-00-00, 2026-11-21_08-00-00-2]\nattempts: 2\n---\n# Body\n\ntext\n",
			want: sessions.Meta{
				Priority: sessions.High, CreatedAt: utc("2026-11-22T09:15:03Z"), Title: "Fix the parser",
				Tags: []string{"parser", "cli"}, DependsOn: []string{"2026-11-20_08-00-00", "2026-11-21_08-00-00-2"}, Attempts: 2,
			},
		},
		{name: "missing fields are defaults", in: "---\ntitle: only a title\n---\nbody\n", want: sessions.Meta{Priority: sessions.Medium, Title: "only a title"}},
		{name: "empty frontmatter", in: "---\n---\nbody\n", want: medium},
		{name: "priority any case", in: "---\npriority: LOW\n---\n", want: sessions.Meta{Priority: sessions.Low}},
		{name: "tags as a block list", in: "---\ntags:\n  - a\n  - b c\n---\n", want: sessions.Meta{Priority: sessions.Medium, Tags: []string{"a", "b c"}}},
		{name: "tags as a string", in: "---\ntags: \"a, b\"\n---\n", want: sessions.Meta{Priority: sessions.Medium, Tags: []string{"a", "b"}}},
		{name: "tags as a plain string", in: "---\ntags: a,  b ,,c,\n---\n", want: sessions.Meta{Priority: sessions.Medium, Tags: []string{"a", "b", "c"}}},
		{name: "one tag", in: "---\ntags: solo\n---\n", want: sessions.Meta{Priority: sessions.Medium, Tags: []string{"solo"}}},
		{name: "depends_on as a string", in: "---\ndepends_on: 2026-01-01_00-00-00, b.1\n---\n", want: sessions.Meta{Priority: sessions.Medium, DependsOn: []string{"2026-01-01_00-00-00", "b.1"}}},
		{name: "depends_on as a block list", in: "---\ndepends_on:\n- x\n- y\n---\n", want: sessions.Meta{Priority: sessions.Medium, DependsOn: []string{"x", "y"}}},
		{name: "created_at RFC 3339", in: "---\ncreated_at: 2026-01-02T03:04:05Z\n---\n", want: sessions.Meta{Priority: sessions.Medium, CreatedAt: utc("2026-01-02T03:04:05Z")}},
		{name: "created_at quoted", in: "---\ncreated_at: \"2026-01-02T03:04:05Z\"\n---\n", want: sessions.Meta{Priority: sessions.Medium, CreatedAt: utc("2026-01-02T03:04:05Z")}},
		{name: "created_at with offset", in: "---\ncreated_at: 2026-01-02T03:04:05+02:00\n---\n", want: sessions.Meta{Priority: sessions.Medium, CreatedAt: utc("2026-01-02T01:04:05Z")}},
		{name: "created_at with fraction", in: "---\ncreated_at: 2026-01-02T03:04:05.25Z\n---\n", want: sessions.Meta{Priority: sessions.Medium, CreatedAt: utc("2026-01-02T03:04:05.25Z")}},
		{name: "created_at with a space", in: "---\ncreated_at: 2026-01-02 03:04:05\n---\n", want: sessions.Meta{Priority: sessions.Medium, CreatedAt: utc("2026-01-02T03:04:05Z")}},
		{name: "created_at with a space and offset", in: "---\ncreated_at: 2026-01-02 03:04:05-01:00\n---\n", want: sessions.Meta{Priority: sessions.Medium, CreatedAt: utc("2026-01-02T04:04:05Z")}},
		{name: "created_at without zone", in: "---\ncreated_at: 2026-01-02T03:04:05\n---\n", want: sessions.Meta{Priority: sessions.Medium, CreatedAt: utc("2026-01-02T03:04:05Z")}},
		{name: "created_at date only", in: "---\ncreated_at: 2026-01-02\n---\n", want: sessions.Meta{Priority: sessions.Medium, CreatedAt: utc("2026-01-02T00:00:00Z")}},
		{
			name: "unknown fields ignored",
			in:   "---\nowner: someone\npriority: low\nnested:\n  deep: [1, 2]\n  title: not this\n# title: nor this\ntitle: this\n---\n",
			want: sessions.Meta{Priority: sessions.Low, Title: "this"},
		},
		{name: "no frontmatter: title from heading", in: "# Write the docs\n\nbody\n", want: sessions.Meta{Priority: sessions.Medium, Title: "Write the docs"}},
		{name: "no frontmatter: heading with spaces", in: "#   Spaced out  \n", want: sessions.Meta{Priority: sessions.Medium, Title: "Spaced out"}},
		{name: "no frontmatter: no heading", in: "just text\n# later heading\n", want: medium},
		{name: "no frontmatter: second-level heading", in: "## Sub\n", want: medium},
		{name: "no frontmatter: heading without newline", in: "# Only", want: sessions.Meta{Priority: sessions.Medium, Title: "Only"}},
		{name: "empty file", in: "", want: medium},
		{name: "indented delimiter is not frontmatter", in: " ---\ntitle: x\n---\n", want: medium},
		{
			name: "CRLF line endings",
			in:   "---\r\npriority: high\r\ntitle: Windows\r\ntags: [a, b]\r\ncreated_at: 2026-01-02T03:04:05Z\r\n---\r\nbody\r\n",
			want: sessions.Meta{Priority: sessions.High, Title: "Windows", Tags: []string{"a", "b"}, CreatedAt: utc("2026-01-02T03:04:05Z")},
		},
		{name: "CRLF without frontmatter", in: "# Windows heading\r\nbody\r\n", want: sessions.Meta{Priority: sessions.Medium, Title: "Windows heading"}},
		{name: "BOM", in: "\ufeff---\npriority: high\ntitle: With BOM\n---\nbody\n", want: sessions.Meta{Priority: sessions.High, Title: "With BOM"}},
		{name: "BOM and CRLF", in: "\ufeff---\r\npriority: low\r\n---\r\n", want: sessions.Meta{Priority: sessions.Low}},
		{name: "BOM without frontmatter", in: "\ufeff# Heading after BOM\n", want: sessions.Meta{Priority: sessions.Medium, Title: "Heading after BOM"}},
		{name: "closed by ...", in: "---\npriority: high\ntitle: dots\n...\nbody\n", want: sessions.Meta{Priority: sessions.High, Title: "dots"}},
		{name: "closing line without newline", in: "---\npriority: low\n---", want: sessions.Meta{Priority: sessions.Low}},
		{name: "trailing spaces on delimiters", in: "--- \npriority: low\n---\t\n", want: sessions.Meta{Priority: sessions.Low}},
		{name: "body looks like frontmatter", in: "---\ntitle: head\n---\n---\ntitle: body\npriority: high\n---\n", want: sessions.Meta{Priority: sessions.Medium, Title: "head"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sessions.ParseMeta(strings.NewReader(tt.in))
			if err != nil {
				t.Fatalf("ParseMeta(%q): %v", tt.in, err)
			}
			if d := sameMeta(got, tt.want); d != "" {
				t.Errorf("ParseMeta(%q): %s", tt.in, d)
			}
		})
	}
}

func TestParseMetaErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // substrings of the error
	}{
		{
			name: "YAML syntax error on the 3rd frontmatter line",
			in:   "---\ntitle: ok\npriority: high\nbad: x: y\n---\n",
			want: []string{"line 4", "mapping values"},
		},
		{
			name: "YAML syntax error with CRLF",
			in:   "---\r\ntitle: ok\r\npriority: high\r\nbad: x: y\r\n---\r\n",
			want: []string{"line 4"},
		},
		{
			name: "YAML syntax error on the 1st frontmatter line",
			in:   "---\nbad: [x\n---\n",
			want: []string{"line 2"},
		},
		{
			name: "tab indentation",
			in:   "---\ntitle: x\n\tpriority: high\n---\n",
			want: []string{"line 3"},
		},
		{
			name: "type error",
			in:   "---\ntitle: x\npriority: [a]\n---\n",
			want: []string{"line 3", "!!seq"},
		},
		{
			name: "attempts not a number",
			in:   "---\ntitle: x\n\n\nattempts: many\n---\n",
			want: []string{"line 5"},
		},
		{
			name: "unknown priority",
			in:   "---\ntitle: x\npriority: urgent\n---\n",
			want: []string{"line 3", "priority", "urgent"},
		},
		{
			name: "bad created_at",
			in:   "---\ncreated_at: yesterday\n---\n",
			want: []string{"line 2", "created_at", "yesterday"},
		},
		{
			name: "bad depends_on",
			in:   "---\ntitle: x\ntags: [a]\ndepends_on: [ok-1, ../etc]\n---\n",
			want: []string{"line 4", "depends_on", "../etc"},
		},
		{
			name: "two problems",
			in:   "---\npriority: urgent\ncreated_at: never\n---\n",
			want: []string{"line 2: priority", "line 3: created_at"},
		},
		{
			name: "never closed",
			in:   "---\ntitle: x\npriority: high\n",
			want: []string{"line 3", "never closed"},
		},
		{
			name: "only an opening line",
			in:   "---",
			want: []string{"line 1", "never closed"},
		},
		{
			name: "too long",
			in:   "---\ntitle: x\n" + strings.Repeat("# filler line\n", sessions.MaxFrontmatter/14+1) + "---\n",
			want: []string{"longer than"},
		},
		{
			name: "one overlong line",
			in:   "---\ntitle: " + strings.Repeat("x", sessions.MaxFrontmatter+10) + "\n---\n",
			want: []string{"line 2", "longer than"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sessions.ParseMeta(strings.NewReader(tt.in))
			if err == nil {
				t.Fatalf("ParseMeta(%.60q) = %+v, nil; want an error", tt.in, got)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ParseMeta(%.60q) error %q does not contain %q", tt.in, err, w)
				}
			}
			if got.Priority != sessions.Medium {
				t.Errorf("priority with a broken frontmatter = %v, want the default medium", got.Priority)
			}
		})
	}
}

// failingReader fails the test's read if ParseMeta reads past the frontmatter.
type failingReader struct{}

var errReadBody = errors.New("read the body")

func (failingReader) Read([]byte) (int, error) { return 0, errReadBody }

func TestParseMetaReadsOnlyTheHead(t *testing.T) {
	head := "---\npriority: low\ntitle: head only\n---\n"
	got, err := sessions.ParseMeta(io.MultiReader(strings.NewReader(head), failingReader{}))
	if err != nil {
		t.Fatalf("ParseMeta read past the frontmatter: %v", err)
	}
	if d := sameMeta(got, sessions.Meta{Priority: sessions.Low, Title: "head only"}); d != "" {
		t.Error(d)
	}
}

func TestRenderParseRoundTrip(t *testing.T) {
	created := time.Date(2026, 11, 22, 9, 15, 3, 0, time.FixedZone("CET", 3600))
	tests := []struct {
		name string
		meta sessions.Meta
	}{
		{name: "plain", meta: sessions.Meta{Priority: sessions.High, Title: "Fix the parser"}},
		{name: "all fields", meta: sessions.Meta{Priority: sessions.Low, Title: "t", Tags: []string{"a", "b c", "d:e", "f,g", "-h", "#i"}, DependsOn: []string{"2026-01-01_00-00-00", "x.y"}}},
		{name: "double quotes", meta: sessions.Meta{Priority: sessions.Medium, Title: `say "hi"`}},
		{name: "single quotes", meta: sessions.Meta{Priority: sessions.Medium, Title: `it's 'quoted'`}},
		{name: "colon", meta: sessions.Meta{Priority: sessions.Medium, Title: "fix: the thing: now"}},
		{name: "unicode", meta: sessions.Meta{Priority: sessions.Medium, Title: "é 世界 🙂 Ωmega"}},
		{name: "leading dash", meta: sessions.Meta{Priority: sessions.Medium, Title: "- not a list"}},
		{name: "leading hash", meta: sessions.Meta{Priority: sessions.Medium, Title: "# not a comment"}},
		{name: "leading and trailing spaces", meta: sessions.Meta{Priority: sessions.Medium, Title: "  padded  "}},
		{name: "looks like a bool", meta: sessions.Meta{Priority: sessions.Medium, Title: "yes"}},
		{name: "looks like a number", meta: sessions.Meta{Priority: sessions.Medium, Title: "0x1F"}},
		{name: "yaml indicators", meta: sessions.Meta{Priority: sessions.Medium, Title: "[a] {b} &c *d !e |f >g %h @i `j`"}},
		{name: "delimiter", meta: sessions.Meta{Priority: sessions.Medium, Title: "---"}},
		{name: "document end", meta: sessions.Meta{Priority: sessions.Medium, Title: "..."}},
		{name: "newline", meta: sessions.Meta{Priority: sessions.Medium, Title: "first\nsecond"}},
		{name: "CRLF", meta: sessions.Meta{Priority: sessions.Medium, Title: "first\r\nsecond"}},
		{name: "tab and control", meta: sessions.Meta{Priority: sessions.Medium, Title: "a\tb\x1fc"}},
		{name: "newline then delimiter", meta: sessions.Meta{Priority: sessions.High, Title: "first\n---\nsecond", Tags: []string{"after"}}},
		{name: "newline then document end", meta: sessions.Meta{Priority: sessions.High, Title: "first\n...\nsecond", Tags: []string{"after"}}},
		{name: "created_at", meta: sessions.Meta{Priority: sessions.Low, CreatedAt: created}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := []byte("# Body\n\nsome text\n")
			content := sessions.Render(tt.meta, body)
			if !strings.HasSuffix(string(content), "\n---\n"+string(body)) {
				t.Errorf("Render does not end with the closing delimiter and the body:\n%s", content)
			}
			got, err := sessions.ParseMeta(strings.NewReader(string(content)))
			if err != nil {
				t.Fatalf("ParseMeta(Render(%+v)): %v\n%s", tt.meta, err, content)
			}
			want := tt.meta
			if want.CreatedAt.IsZero() {
				want.CreatedAt = time.Time{}
			}
			if d := sameMeta(got, want); d != "" {
				t.Errorf("round trip: %s\nrendered:\n%s", d, content)
			}
		})
	}
}

func TestRenderBody(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string // what follows the closing delimiter
	}{
		{name: "no body", body: "", want: ""},
		{name: "body with newline", body: "text\n", want: "text\n"},
		{name: "body without newline", body: "text", want: "text\n"},
		{name: "body starting with a delimiter", body: "---\nnot: meta\n---\n", want: "---\nnot: meta\n---\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content := string(sessions.Render(sessions.Meta{Priority: sessions.Low, Title: "t"}, []byte(tt.body)))
			_, after, ok := strings.Cut(strings.TrimPrefix(content, "---\n"), "\n---\n")
			if !ok || after != tt.want {
				t.Errorf("Render body part = %q, want %q (file %q)", after, tt.want, content)
			}
			got, err := sessions.ParseMeta(strings.NewReader(content))
			if err != nil || got.Priority != sessions.Low || got.Title != "t" {
				t.Errorf("ParseMeta(Render) = %+v, %v", got, err)
			}
		})
	}
}

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
