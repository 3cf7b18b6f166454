package sessions_test

import (
	"errors"
	"io"
	"slices"
	"strings"
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
