package sessions

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"gopkg.in/yaml.v2"
)

// yamlBody is the YAML between the delimiter lines of a head that readHead
// returned: what adrg/frontmatter must hand yaml.
func yamlBody(head []byte) []byte {
	_, rest, _ := bytes.Cut(head, []byte("\n"))
	end := bytes.LastIndexByte(bytes.TrimRight(rest, " \t\r\n"), '\n')
	if end < 0 {
		return nil
	}
	return rest[:end+1]
}

// checkHeads fails t unless the ways frontmatter is read agree on content:
// scanHead (one read) with readHead on every first read a file could give;
// ParseMeta through one read with ParseMeta one byte at a time; and
// adrg/frontmatter's decoding of the block readHead found with yaml's
// decoding of the lines between its delimiters. An early "---" (one that
// adrg/frontmatter ends the block at) must be refused, never read as a
// shorter block.
func checkHeads(t *testing.T, content []byte) {
	t.Helper()
	wantHead, wantFirst, wantErr := readHead(bytes.NewReader(content))
	for n := 0; n <= len(content) && n <= headBufSize; n++ {
		eof := n == len(content)
		head, first, err, ok := scanHead(content[:n], eof)
		if ok && (!bytes.Equal(head, wantHead) || first != wantFirst || fmt.Sprint(err) != fmt.Sprint(wantErr)) {
			t.Fatalf("scanHead(%q, %v) = %q, %q, %v; readHead: %q, %q, %v", content[:n], eof, head, first, err, wantHead, wantFirst, wantErr)
		}
	}

	one, oneErr := ParseMeta(bytes.NewReader(content))
	bytewise, bytewiseErr := ParseMeta(iotest.OneByteReader(bytes.NewReader(content)))
	if fmt.Sprintf("%#v %v", one, oneErr) != fmt.Sprintf("%#v %v", bytewise, bytewiseErr) {
		t.Fatalf("ParseMeta(%q) in one read: %#v, %v\none byte at a time: %#v, %v", content, one, oneErr, bytewise, bytewiseErr)
	}
	if wantErr != nil {
		return
	}

	var viaAdrg, viaYAML rawMeta
	adrgErr := decodeHead(wantHead, &viaAdrg)
	body := yamlBody(wantHead)
	yamlErr := yaml.Unmarshal(body, &viaYAML)
	early := false
	for _, line := range bytes.Split(body, []byte("\n")) {
		early = early || string(bytes.TrimSpace(line)) == "---"
	}
	switch {
	case adrgErr == nil && yamlErr != nil:
		t.Fatalf("decodeHead(%q) took what yaml refuses: %v", wantHead, yamlErr)
	case adrgErr == nil && early:
		t.Fatalf("decodeHead(%q) read a block that holds a line \"---\"", wantHead)
	case adrgErr == nil && !reflect.DeepEqual(viaAdrg, viaYAML):
		t.Fatalf("decodeHead(%q):\n got %#v\nyaml %#v", wantHead, viaAdrg, viaYAML)
	case adrgErr != nil && yamlErr == nil && !early:
		t.Fatalf("decodeHead(%q) refused what yaml takes: %v", wantHead, adrgErr)
	case adrgErr != nil && !strings.Contains(adrgErr.Error(), "line "):
		t.Fatalf("decodeHead(%q): error %q names no line", wantHead, adrgErr)
	}
}

// headCases are files at the edges of where frontmatter starts and ends.
var headCases = func() []string {
	long := strings.Repeat("x", headBufSize)
	return []string{
		"", "---", "---\n", "---\n---", "---\n---\n", "---\ntitle: x\n", "---\ntitle: x", "---\n...\n",
		"# Only", "# Heading\n", "\ufeff---\n---\n", "\ufeff---\ntitle: x\n...\n", "--- \t\r\n---  \r\n", "----\n---\n", " ---\n---\n",
		"\n---\ntitle: x\n---\n", "---\ntitle: x\n...  \r\nbody\n", "---\r\ntitle: x\r\n---\r\n",
		"---\ntitle: |\n  a\n  ---\n  b\npriority: high\n---\n",
		"---\ntitle: |\n  a\n  ...\n  b\npriority: high\n---\n",
		"---\ntitle: x\n---\u00a0\npriority: high\n---\n",
		"---\ntitle: x\n\t---\n---\n",
		"---\ntitle: \"a\n  --- b\"\n---\n",
		"---\ntitle: [broken\n---\n", "---\ntitle: x\npriority: urgent\n---\n",
		long, long[:headBufSize-1], "# " + long, "---\n" + long[:headBufSize-8] + "\n---\n", "---\n" + long + "\n---\n",
		"---\ntitle: x\n" + strings.Repeat("# filler\n", 8000) + "---\n",
	}
}()

func TestReadingPathsAgree(t *testing.T) {
	for _, content := range headCases {
		checkHeads(t, []byte(content))
	}
	for _, m := range []Meta{
		{Priority: High, Title: "first\n---\nsecond", Tags: []string{"a\n---\nb"}},
		{Priority: Low, Title: "first\n...\nsecond"},
		{Title: strings.Repeat("long --- words ", 30)},
	} {
		checkHeads(t, Render(m, []byte("body\n")))
	}
}

// TestRandomFrontmatterPaths builds frontmatter from pieces of YAML that
// byte-level fuzzing rarely puts together (block scalars, lists, lines
// that look like delimiters) and checks each with checkHeads.
func TestRandomFrontmatterPaths(t *testing.T) {
	keys := []string{"title", "priority", "created_at", "tags", "depends_on", "attempts", "owner", "Title", "- a", "#", ""}
	seps := []string{": ", ":", ":\t", " : "}
	values := []string{"a", "high", "LOW", "2026-01-02T03:04:05Z", "3", "03", "~", "", "a b", "a: b", "a #c", "'a'", "'it''s'",
		"\"a\\nb\"", "'a", "[]", "[a, b]", "[a,]", "{a: b}", "&x a", "*x", "!!str a", "|", ">-", "- a", "é", "a, b,", "---", "..."}
	lines := []string{"", "  ", "# c", "  # c", "\t", "- a", "  - a", "  - 'b'", "  x", "  ---", "  ...", " ---", "\t---", "...x", "--- x"}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(list []string) string { return list[rng.IntN(len(list))] }
	for range 3000 {
		var b strings.Builder
		for range 1 + rng.IntN(5) {
			if rng.IntN(3) == 0 {
				b.WriteString(pick(lines) + "\n")
				continue
			}
			b.WriteString(pick(keys) + pick(seps) + pick(values) + "\n")
			for rng.IntN(2) == 0 {
				b.WriteString(pick(lines) + "\n")
			}
		}
		body := b.String()
		if rng.IntN(4) == 0 {
			body = strings.ReplaceAll(body, "\n", "\r\n")
		}
		checkHeads(t, []byte("---\n"+body+pick([]string{"---\n", "...\n", "--- \n"})+"body\n"))
	}
}

// FuzzReadingPaths: whatever the file, the ways of reading its frontmatter
// agree (see checkHeads), and ParseMeta's errors name a line.
func FuzzReadingPaths(f *testing.F) {
	for _, content := range headCases {
		f.Add([]byte(content))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkHeads(t, data)
		if _, err := ParseMeta(bytes.NewReader(data)); err != nil && !strings.Contains(err.Error(), "line ") {
			t.Errorf("ParseMeta(%q): error %q names no line", data, err)
		}
	})
}

func TestRenumberLines(t *testing.T) {
	for in, want := range map[string]string{
		"line 1: x":                       "line 2: x",
		"line 9: a\nline 10: b":           "line 10: a\nline 11: b",
		"offline 3, line line 4, line x5": "offline 4, line line 5, line x5",
		"no line here":                    "",
		"line ":                           "",
	} {
		got, ok := renumberLines(in)
		if ok != (want != "") || ok && got != want {
			t.Errorf("renumberLines(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}
