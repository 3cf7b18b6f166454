package sessions

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"gopkg.in/yaml.v2"
)

// yamlParseMeta is ParseMeta as it was before fastMeta and scanHead: the
// reference they must agree with.
func yamlParseMeta(r io.Reader) (Meta, error) {
	m := Meta{Priority: Medium}
	head, first, err := readHead(r)
	if err == errNoFrontmatter {
		if t, ok := strings.CutPrefix(first, "# "); ok {
			m.Title = strings.TrimSpace(t)
		}
		return m, nil
	}
	if err != nil {
		return m, err
	}
	var raw rawMeta
	body := yamlPart(head)
	if err := yaml.Unmarshal(body, &raw); err != nil {
		return Meta{Priority: Medium}, yamlError(body, err)
	}
	return raw.meta(head)
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// checkSameAsYAML fails t unless ParseMeta, fastMeta and scanHead agree with
// yaml and readHead on the file content. It returns whether fastMeta took
// the frontmatter.
func checkSameAsYAML(t *testing.T, content []byte) (fast bool) {
	t.Helper()
	want, wantErr := yamlParseMeta(bytes.NewReader(content))
	readers := map[string]io.Reader{
		"whole":         bytes.NewReader(content),
		"byte a read":   iotest.OneByteReader(bytes.NewReader(content)),
		"EOF with data": iotest.DataErrReader(bytes.NewReader(content)),
	}
	for name, r := range readers {
		got, err := ParseMeta(r)
		if errString(err) != errString(wantErr) || !reflect.DeepEqual(got, want) {
			t.Fatalf("ParseMeta(%q), %s:\n got %#v, %v\nwant %#v, %v", content, name, got, err, want, wantErr)
		}
	}

	wantHead, wantFirst, wantHeadErr := readHead(bytes.NewReader(content))
	for _, n := range []int{len(content), len(content) / 2, headBufSize, headBufSize - 1} {
		n = min(n, len(content))
		eof := n == len(content)
		head, first, err, ok := scanHead(content[:n], eof)
		if ok && (!bytes.Equal(head, wantHead) || first != wantFirst || errString(err) != errString(wantHeadErr)) {
			t.Fatalf("scanHead(%q, %v) = %q, %q, %v; readHead: %q, %q, %v", content[:n], eof, head, first, err, wantHead, wantFirst, wantHeadErr)
		}
	}

	if wantHeadErr != nil {
		return false
	}
	body := yamlPart(wantHead)
	raw, ok := fastMeta(body)
	if !ok {
		return false
	}
	var yraw rawMeta
	if err := yaml.Unmarshal(body, &yraw); err != nil {
		t.Fatalf("fastMeta(%q) took what yaml refuses: %v", body, err)
	}
	if !reflect.DeepEqual(raw, yraw) {
		t.Fatalf("fastMeta(%q):\n got %#v\nyaml %#v", body, raw, yraw)
	}
	return true
}

// fastMetaCases are frontmatter bodies, and whether fastMeta must take them
// (false: it must leave them to yaml, which errs or reads them some other
// way than fastMeta knows).
var fastMetaCases = []struct {
	body string
	fast bool
}{
	// What Render writes.
	{"priority: medium\ncreated_at: \"2026-01-01T00:00:00Z\"\ntitle: 'Bench session 0: make the thing faster'\ntags: [bench, perf]\n", true},
	{"priority: high\ncreated_at: \"2026-11-22T08:15:03Z\"\ntitle: it's 'quoted'\ndepends_on: [2026-01-01_00-00-00, x.y]\n", true},
	{"priority: low\ncreated_at: \"0001-01-01T00:00:00Z\"\n", true},
	{"", true},
	{"# only a comment\n\n   \n  # indented comment\n", true},

	// Plain scalars and comments.
	{"title: a # c\n", true},
	{"title: a#c\n", true},
	{"title: a\t# c\n", true},
	{"title: a \t \n", true},
	{"title: a\tb\n", true},
	{"title: a  b  c\n", true},
	{"title: a:b\n", true},
	{"title: http://x.y/z?q=1#frag\n", true},
	{"title: a [b] {c}, d\n", true},
	{"title: it's \"x\"\n", true},
	{"title: a: b\n", false},
	{"title: a:\n", false},
	{"title: a:\tb\n", false},
	{"title: yes\npriority: HIGH\n", true},
	{"title: 1.0\n", true},
	{"title: 0x1F\n", true},
	{"title: .inf\n", true},
	{"title: 2026-01-02\n", true},
	{"title: <<\n", true},
	{"title: ~\n", true},
	{"title: null\n", true},
	{"title: Null\n", true},
	{"title: NULL\n", true},
	{"title: nULL\n", true},
	{"title:\n", true},
	{"title: # nothing\n", true},
	{"title:\npriority: low\n", true},
	{"title: é 世界 🙂 Ωmega\n", true},

	// Quoted scalars.
	{"title: ''\n", true},
	{"title: \"\"\n", true},
	{"title: 'it''s'\n", true},
	{"title: ''''\n", true},
	{"title: '  padded  '\n", true},
	{"title: \"a: b # c\"\n", true},
	{"title: 'a' # c\n", true},
	{"title: \"a\"  # c\n", true},
	{"title: 'a'#c\n", false},
	{"title: 'a' b\n", false},
	{"title: 'a\n", false},
	{"title: 'a\n  b'\n", false},
	{"title: \"a\\\"b\"\n", false},
	{"title: \"a\\tb\"\n", false},
	{"title: \"a\\\n  b\"\n", false},

	// Values fastMeta leaves to yaml.
	{"title: - x\n", false},
	{"title: ? x\n", false},
	{"title: [a]\n", false},
	{"title: {a: b}\n", false},
	{"title: &a x\n", false},
	{"title: *a\n", false},
	{"title: !!str x\n", false},
	{"title: !!binary zz\n", false},
	{"title: |\n  a\n", false},
	{"title: >-\n  a\n", false},
	{"title: @x\n", false},
	{"title: `x`\n", false},
	{"title: %x\n", false},
	{"title: a\n  b\n", false},
	{"title: a\n\n  b\n", false},
	{"title:\n  a\n", false},
	{"title: a\n  # c\npriority: low\n", true},
	{"title: a\n\t\npriority: low\n", false},
	{"title:\ta\n", false},
	{"title: \ta\n", false},
	{"title:\t\n", false},
	{"\ttitle: a\n", false},
	{"  title: a\n", false},
	{"\t# comment\n", false},
	{"title: a\ntitle: b\n", false},
	{"title: a\rb\n", false},
	{"title: a\u0085b\n", false},
	{"title: a\u2028b\n", false},
	{"title: \ufeffa\n", false},
	{"title: a\x7fb\n", false},
	{"title: \xc2\x80\n", false},
	{"title: \xff\n", false},
	{"title: \x00\n", false},
	{"title: \uffff\n", false},

	// Keys.
	{"Title: x\n", true},
	{"owner: someone\npriority: low\n", true},
	{"_x: y\na-b: c\nx1: d\n", true},
	{"1: x\n", false},
	{"title : x\n", false},
	{"title:x\n", false},
	{"-a: b\n", false},
	{"? title\n: x\n", false},
	{"<<: {title: x}\n", false},
	{"%YAML 1.1\n", false},
	{"--- x\n", false},
	{"... x\n", false},
	{"title\n", false},
	{"nested:\n  title: not this\ntitle: this\n", false},
	{"x: [1, [2]]\n", false},
	{"x: &a b\ny: *a\n", false},
	{"owner: x\nowner: y\n", true},
	{strings.Repeat("k", 64) + ": x\n", true},
	{strings.Repeat("k", 65) + ": x\n", false},

	// Flow lists.
	{"tags: []\n", true},
	{"tags: [ ]\n", true},
	{"tags: [a,b]\n", true},
	{"tags: [ a , b c ]\n", true},
	{"tags: [a, ~, null, '', \"\"]\n", true},
	{"tags: ['a b', \"c, d\", 'e''f']\n", true},
	{"tags: [a-b, 2026-01-01_00-00-00, x.y]\n", true},
	{"tags: [a] # c\n", true},
	{"tags: [a]#c\n", false},
	{"tags: [a] x\n", false},
	{"tags: [a, b,]\n", false},
	{"tags: [a,,b]\n", false},
	{"tags: [,]\n", false},
	{"tags: [a\n", false},
	{"tags: [a,\n  b]\n", false},
	{"tags: [a]]\n", false},
	{"tags: [a:b]\n", false},
	{"tags: [a: b]\n", false},
	{"tags: [a #b]\n", false},
	{"tags: [-a]\n", false},
	{"tags: [\ta]\n", false},
	{"tags: [a\t]\n", false},
	{"tags: [{a: b}]\n", false},
	{"tags: ['a'b]\n", false},
	{"depends_on: [2026-01-01_00-00-00, ../etc]\n", true},
	{"other: [x, y]\n", true},

	// Lists as one string.
	{"tags: a, b\n", true},
	{"tags: a,  b ,,c,\n", true},
	{"tags: 'a, b'\n", true},
	{"tags: ,\n", false},
	{"tags: ''\n", true},
	{"tags: ~\n", true},
	{"tags: Null\n", true},
	{"tags:\n", true},
	{"tags: 12\n", true},

	// Block lists.
	{"tags:\n  - a\n  - b c\n", true},
	{"tags:\n- a\n- b\ntitle: x\n", true},
	{"tags: # list\n  - a\n", true},
	{"tags:\n# c\n\n  - a\n    # c\n\n  - b\n# c\ntitle: x\n", true},
	{"tags:\n  - 'x'\n  - \"y\" # c\n  - ~\n", true},
	{"tags:\n  - a\n - b\n", false},
	{"tags:\n  - a\n    - b\n", false},
	{"tags:\n  - a\n- b\n", false},
	{"tags:\n  - a\n  b\n", false},
	{"tags:\n  - a\n    b\n", false},
	{"tags:\n  - - a\n", false},
	{"tags:\n  - a: b\n", false},
	{"tags:\n  - [a]\n", false},
	{"tags:\n  -\n", false},
	{"tags:\n  - \n", false},
	{"tags:\n  - # c\n", false},
	{"tags:\n  -a\n", false},
	{"tags:\n-a\n", false},
	{"tags:\n-\n", false},
	{"tags:\n\t- a\n", false},
	{"tags:\n  -\ta\n", false},
	{"tags:\n  - \ta\n", false},
	{"tags:\n  - a\n\t\n", false},
	{"title:\n- a\n", false},
	{"other:\n  - a\n  - b\n", true},
	{"- a\n- b\n", false},

	// Numbers.
	{"attempts: 0\n", true},
	{"attempts: 3\n", true},
	{"attempts: 123456789012345678\n", true},
	{"attempts: 1234567890123456789\n", false},
	{"attempts: 99999999999999999999\n", false},
	{"attempts: 03\n", false},
	{"attempts: 0x10\n", false},
	{"attempts: 1_0\n", false},
	{"attempts: -1\n", false},
	{"attempts: +1\n", false},
	{"attempts: 1.5\n", false},
	{"attempts: '3'\n", false},
	{"attempts: many\n", false},
	{"attempts: ~\n", true},
	{"attempts:\n", true},
	{"attempts: [1]\n", false},

	// Values that are wrong to raw.meta, not to yaml: its errors, from either path.
	{"priority: urgent\n", true},
	{"created_at: yesterday\n", true},
	{"created_at: 2026-01-02 03:04:05-01:00\n", true},
	{"depends_on: ../etc\n", true},
}

func TestFastMetaMatchesYAML(t *testing.T) {
	for _, tt := range fastMetaCases {
		for _, eol := range []string{"\n", "\r\n"} {
			body := strings.ReplaceAll(tt.body, "\n", eol)
			content := []byte("---" + eol + body + "---" + eol + "# Body" + eol)
			t.Run(fmt.Sprintf("%q", body), func(t *testing.T) {
				if fast := checkSameAsYAML(t, content); fast != tt.fast {
					t.Errorf("fastMeta took it: %v, want %v", fast, tt.fast)
				}
			})
		}
	}
}

// TestFastMetaRenderRoundTrip: whatever Render writes, fastMeta takes or
// leaves to yaml, and reads as yaml does.
func TestFastMetaRenderRoundTrip(t *testing.T) {
	titles := []string{"plain", "Fix: the parser", "it's", `say "hi"`, "- dash", "# hash", "  padded ", "yes", "0x1F",
		"[a] {b}", "a\tb", "first\nsecond", "é 世界 🙂", "", "~", "null", "a\\b", "a: b", "a #b"}
	tags := [][]string{nil, {"a"}, {"a", "b c", "d:e", "f,g", "-h", "#i", "j'k", `l"m`, "~", ""}}
	for i, title := range titles {
		for _, tg := range tags {
			m := Meta{Priority: Priority(i%3 - 1), Title: title, Tags: tg, DependsOn: []string{"2026-01-01_00-00-00"},
				CreatedAt: time.Date(2026, 11, 22, 9, 15, 3, 0, time.UTC)}
			checkSameAsYAML(t, Render(m, []byte("body\n")))
		}
	}
}

// TestFastMetaTakesRenderedFiles: the files pickup writes take the fast
// path, or it would not make listing faster.
func TestFastMetaTakesRenderedFiles(t *testing.T) {
	m := Meta{Priority: High, Title: "Fix the parser: now", Tags: []string{"a", "b"}, DependsOn: []string{"2026-01-01_00-00-00"},
		CreatedAt: time.Date(2026, 11, 22, 9, 15, 3, 0, time.UTC)}
	content, err := SetField(Render(m, []byte("# Body\n")), "attempts", "2")
	if err != nil {
		t.Fatal(err)
	}
	if !checkSameAsYAML(t, content) {
		t.Errorf("fastMeta left a rendered file to yaml:\n%s", content)
	}
}

func TestScanHeadMatchesReadHead(t *testing.T) {
	long := strings.Repeat("x", headBufSize)
	for _, content := range []string{
		"", "---", "---\n", "---\n---", "---\n---\n", "---\ntitle: x\n", "---\ntitle: x", "---\n...\n",
		"# Only", "# Heading\n", "\ufeff---\n---\n", "--- \t\r\n---  \r\n", "----\n---\n", " ---\n---\n",
		long, long[:headBufSize-1], "# " + long, "---\n" + long[:headBufSize-8] + "\n---\n", "---\n" + long + "\n---\n",
		"---\ntitle: x\n" + strings.Repeat("# filler\n", 8000) + "---\n",
	} {
		checkSameAsYAML(t, []byte(content))
	}
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

// TestFastMetaRandomFrontmatter builds frontmatter from pieces of YAML
// that are near the edge of what fastMeta takes, which byte-level fuzzing
// rarely puts together, and checks each against yaml.
func TestFastMetaRandomFrontmatter(t *testing.T) {
	keys := []string{"title", "priority", "created_at", "tags", "depends_on", "attempts", "owner", "x-y", "Title", "- a", "#", ""}
	seps := []string{": ", ":", ":  ", ":\t", " : ", ": \t"}
	values := []string{"a", "high", "LOW", "2026-01-02T03:04:05Z", "2026-01-02", "3", "03", "0", "-1", "~", "null", "NULL", "",
		"a b", "a:b", "a: b", "a:", "a #c", "a#b", "a\t#c", "a ", "'a'", "'it''s'", "'a' #c", "'a'#c", "\"a\"", "\"a\\nb\"", "'a",
		"[]", "[a, b]", "[ 'a', \"b\" ]", "[a,]", "[a b]", "[a, [b]]", "[a]x", "{a: b}", "&x a", "*x", "!!str a", "|", ">-", "- a",
		"é", "a, b,", ",", "[~, null]", "yes", "1.5", "0x1F", "<<", "`a`", "@a", "%a", "?a", ":a", "-a"}
	lines := []string{"", "  ", "# c", "  # c", "\t", "\t# c", " \t", "- a", "  - a", "  - 'b'", "    - c", "  - a: b", "  -", "  - ~", "- [a]",
		"  - \ta", "  -\ta", "  x", "...", "---"}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(list []string) string { return list[rng.IntN(len(list))] }
	fast := 0
	for range 20000 {
		var b strings.Builder
		for range 1 + rng.IntN(5) {
			if rng.IntN(3) == 0 {
				b.WriteString(pick(lines) + "\n")
				continue
			}
			value := pick(values)
			if rng.IntN(3) == 0 {
				value = "" // then perhaps a block list
			}
			b.WriteString(pick(keys) + pick(seps) + value + "\n")
			for rng.IntN(2) == 0 {
				b.WriteString(pick(lines) + "\n")
			}
		}
		body := b.String()
		if rng.IntN(4) == 0 {
			body = strings.ReplaceAll(body, "\n", "\r\n")
		}
		if checkSameAsYAML(t, []byte("---\n"+body+"---\n")) {
			fast++
		}
	}
	if fast < 1000 {
		t.Errorf("fastMeta took %d of 20000 frontmatters: the test no longer tests it", fast)
	}
}

// FuzzFastMeta: fastMeta and scanHead never disagree with yaml and
// readHead. Each input is tried as a whole file and as a frontmatter body.
func FuzzFastMeta(f *testing.F) {
	for _, tt := range fastMetaCases {
		f.Add([]byte(tt.body))
	}
	f.Add(Render(Meta{Priority: High, Title: "t", Tags: []string{"a", "b"}}, []byte("body\n")))
	f.Add([]byte("# heading\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSameAsYAML(t, data)
		checkSameAsYAML(t, append(append([]byte("---\n"), data...), "\n---\n"...))
	})
}
