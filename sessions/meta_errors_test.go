package sessions_test

import (
	"strings"
	"testing"

	"github.com/pickup-dev/pickup/sessions"
)

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
		{
			// adrg/frontmatter ends the block at any line that is "---"
			// once trimmed: reading what comes before it would drop the
			// priority without a word.
			name: "indented delimiter inside a block scalar",
			in:   "---\ntitle: |\n  first\n  ---\n  second\npriority: high\n---\nbody\n",
			want: []string{"line 4", "inside a value", "quote"},
		},
		{
			name: "tab-indented delimiter",
			in:   "---\ntitle: x\n\t---\npriority: high\n---\n",
			want: []string{"line 3", "inside a value"},
		},
		{
			name: "control character after thousands of lines",
			in:   "---\n" + strings.Repeat("note: x\n", 3000) + "title: \x01\n---\n",
			want: []string{"line 3002", "control characters"},
		},
		{
			name: "bad base64 after hundreds of lines",
			in:   "---\n" + strings.Repeat("note: x\n", 300) + "title: !!binary zz\n---\n",
			want: []string{"line 302"},
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
