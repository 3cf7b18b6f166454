package sessions

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/adrg/frontmatter"
	"gopkg.in/yaml.v2"
)

// Meta is what pickup reads from a session's frontmatter.
type Meta struct {
	Priority  Priority
	CreatedAt time.Time
	Title     string
	Tags      []string
	DependsOn []string
	// Attempts counts failed runs of `pickup work`.
	Attempts int
}

// MaxFrontmatter bounds how much of a file pickup reads to find its
// frontmatter, so that listing a board never reads a session's body.
const MaxFrontmatter = 64 << 10

// errNoFrontmatter means the file has no leading "---" line.
var errNoFrontmatter = errors.New("no frontmatter")

// stringList reads a YAML list of strings, or one string of
// comma-separated items (tags: a, b).
type stringList []string

func (l *stringList) UnmarshalYAML(unmarshal func(any) error) error {
	var many []string
	if err := unmarshal(&many); err == nil {
		*l = many
		return nil
	}
	var one string
	if err := unmarshal(&one); err != nil {
		return err
	}
	*l = commaList([]byte(one))
	return nil
}

// commaList splits b at commas, trims blanks around each part and drops
// the empty ones.
func commaList(b []byte) []string {
	var out []string
	for len(b) > 0 {
		var part []byte
		part, b, _ = bytes.Cut(b, []byte(","))
		if part = bytes.TrimSpace(part); len(part) > 0 {
			out = append(out, string(part))
		}
	}
	return out
}

// rawMeta is the frontmatter as decoded, before its values are checked.
// Keys it does not name are ignored.
type rawMeta struct {
	Priority  string     `yaml:"priority"`
	CreatedAt string     `yaml:"created_at"`
	Title     string     `yaml:"title"`
	Tags      stringList `yaml:"tags"`
	DependsOn stringList `yaml:"depends_on"`
	Attempts  int        `yaml:"attempts"`
}

// ParseMeta reads the frontmatter at the start of r and nothing more. A
// file without frontmatter has default metadata (its title is its first
// "# heading" line). A non-nil error means the frontmatter is broken; it
// names the line in the file, and m then holds the defaults.
func ParseMeta(r io.Reader) (m Meta, err error) {
	buf := make([]byte, headBufSize)
	n, rerr := r.Read(buf)
	head, first, err, ok := scanHead(buf[:n], rerr == io.EOF)
	if !ok {
		head, first, err = readHead(io.MultiReader(bytes.NewReader(buf[:n]), restAfter(r, rerr)))
	}
	return metaOf(head, first, err)
}

// metaOf is ParseMeta's result for what readHead returned.
func metaOf(head []byte, first string, err error) (Meta, error) {
	return newHeadDecoder().meta(head, first, err)
}

// headDecoder decodes frontmatter blocks with adrg/frontmatter, reusing
// one read buffer: adrg/frontmatter wraps the reader it is given in a
// bufio.Reader, a new 4 KiB buffer per file unless the reader already is
// one that large, which a cold listing of 100,000 files feels. Use one per
// goroutine.
type headDecoder struct {
	src bytes.Reader
	br  *bufio.Reader
}

func newHeadDecoder() *headDecoder {
	d := &headDecoder{}
	d.br = bufio.NewReaderSize(&d.src, headBufSize)
	return d
}

// meta is metaOf.
func (d *headDecoder) meta(head []byte, first string, err error) (m Meta, _ error) {
	m.Priority = Medium
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
	if err := d.decode(head, &raw); err != nil {
		return m, err
	}
	return raw.meta(head)
}

// decodeHead decodes the frontmatter block head, as readHead returns it,
// into v (see headDecoder.decode).
func decodeHead(head []byte, v any) error { return newHeadDecoder().decode(head, v) }

// decode decodes the frontmatter block head, as readHead returns it, into
// v: adrg/frontmatter reads exactly that block, finds the YAML between its
// delimiter lines, and has yaml.v2 decode it. Its errors name the line in
// the file.
func (d *headDecoder) decode(head []byte, v any) error {
	in := asDashes(head)
	d.src.Reset(in)
	d.br.Reset(&d.src)
	format := frontmatter.NewFormat("---", "---", func(data []byte, v any) error {
		if err := yaml.Unmarshal(data, v); err != nil {
			return yamlError(data, err)
		}
		return nil
	})
	rest, err := frontmatter.MustParse(d.br, v, format)
	switch {
	case errors.Is(err, frontmatter.ErrNotFound):
		// readHead found both delimiter lines, so this is a bug.
		return errors.New("line 1: frontmatter not found by its decoder")
	case err != nil:
		return err
	case len(rest) > 0:
		// adrg/frontmatter ends the block at the first line that is "---"
		// once trimmed of blanks on both sides, such as a line of an
		// indented block scalar. What it decoded is then a part of the
		// frontmatter: saying so beats silently dropping the rest.
		line := bytes.Count(in[:len(in)-len(rest)], []byte("\n"))
		return fmt.Errorf("line %d: this \"---\" line, inside a value, ends the frontmatter before its closing line: quote the value that holds it", line)
	}
	return nil
}

// asDashes returns head as adrg/frontmatter reads it, with "---" lines as
// its only delimiters: without a leading byte-order mark, and with a
// closing "..." (YAML's document end) written "---". The line count is
// unchanged, so yaml's line numbers still hold.
func asDashes(head []byte) []byte {
	body := bytes.TrimPrefix(head, []byte("\ufeff"))
	trimmed := bytes.TrimRight(body, " \t\r\n")
	if !bytes.HasSuffix(trimmed, []byte("\n...")) {
		return body
	}
	out := make([]byte, 0, len(body))
	out = append(out, trimmed[:len(trimmed)-3]...)
	return append(out, "---\n"...)
}

func (raw rawMeta) meta(head []byte) (Meta, error) {
	m := Meta{Priority: Medium, Title: raw.Title, Tags: raw.Tags, DependsOn: raw.DependsOn, Attempts: raw.Attempts}
	var errs []error
	p, err := ParsePriority(raw.Priority)
	if err != nil {
		errs = append(errs, fmt.Errorf("line %d: priority: %v", keyLine(head, "priority"), err))
	}
	m.Priority = p
	if raw.CreatedAt != "" {
		t, err := parseTime(raw.CreatedAt)
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: created_at %q is not an RFC 3339 time such as 2026-11-22T09:15:03Z", keyLine(head, "created_at"), raw.CreatedAt))
		}
		m.CreatedAt = t
	}
	for _, dep := range m.DependsOn {
		if err := ValidateID(dep); err != nil {
			errs = append(errs, fmt.Errorf("line %d: depends_on: %v", keyLine(head, "depends_on"), err))
		}
	}
	return m, errors.Join(errs...)
}

func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05Z07:00", "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("cannot parse time %q", s)
}

// keyLine returns the 1-based line in the file of a top-level key.
func keyLine(head []byte, key string) int {
	for i, line := range strings.Split(string(head), "\n") {
		if strings.HasPrefix(line, key+":") {
			return i + 1
		}
	}
	return 1
}
