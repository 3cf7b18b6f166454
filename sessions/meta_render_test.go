package sessions_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/sessions"
)

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
