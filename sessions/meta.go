package sessions

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
	*l = nil
	for _, s := range strings.Split(one, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

type rawMeta struct {
	Priority  string     `yaml:"priority"`
	CreatedAt string     `yaml:"created_at"`
	Title     string     `yaml:"title"`
	Tags      stringList `yaml:"tags"`
	DependsOn stringList `yaml:"depends_on"`
	Attempts  int        `yaml:"attempts"`
}

// readHead reads the frontmatter block at the start of r, delimiters
// included, and nothing after it. It returns errNoFrontmatter (with the first
// line, for a title) when the file does not start with "---".
func readHead(r io.Reader) (head []byte, firstLine string, err error) {
	br := bufio.NewReaderSize(r, headBufSize)
	var buf bytes.Buffer
	lineNo := 0
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// An overlong line: keep reading it.
			buf.Write(line)
			if buf.Len() > MaxFrontmatter {
				return nil, "", fmt.Errorf("line %d: frontmatter is longer than %d bytes or never closed: end it with a line \"---\"", lineNo+1, MaxFrontmatter)
			}
			continue
		}
		if len(line) == 0 && err == io.EOF && lineNo > 0 {
			// The file ends with a newline: its last line was lineNo.
			return nil, "", neverClosed(lineNo)
		}
		buf.Write(line)
		lineNo++
		text := string(line)
		if lineNo == 1 {
			text = strings.TrimPrefix(text, "\ufeff")
		}
		// Only trailing blanks: an indented "---" belongs to a YAML value.
		text = strings.TrimRight(text, " \t\r\n")
		if lineNo == 1 {
			if text != "---" {
				return nil, text, errNoFrontmatter
			}
		} else if text == "---" || text == "..." {
			return buf.Bytes(), "", nil
		}
		if err == io.EOF {
			return nil, "", neverClosed(lineNo)
		}
		if err != nil {
			return nil, "", err
		}
		if buf.Len() > MaxFrontmatter {
			return nil, "", fmt.Errorf("line %d: frontmatter is longer than %d bytes or never closed: end it with a line \"---\"", lineNo, MaxFrontmatter)
		}
	}
}

// neverClosed is the error for frontmatter that ends at the end of the file
// on line lineNo.
func neverClosed(lineNo int) error {
	return fmt.Errorf("line %d: frontmatter opened on line 1 is never closed: add a line \"---\" after it", lineNo)
}

// yamlPart returns the YAML between the delimiter lines of head.
func yamlPart(head []byte) []byte {
	_, rest, _ := bytes.Cut(head, []byte("\n"))
	end := bytes.LastIndexByte(bytes.TrimRight(rest, " \t\r\n"), '\n')
	if end < 0 {
		return nil
	}
	return rest[:end+1]
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

// headBufSize is what a first read takes to find the frontmatter: a typical
// session file whole, and no more than readHead's buffer, which is what
// lets scanHead stand in for readHead.
const headBufSize = 4096

// restAfter is what is left to read of r after a read that returned err.
func restAfter(r io.Reader, err error) io.Reader {
	if err != nil {
		return errReader{err}
	}
	return r
}

// metaOf is ParseMeta's result for what readHead returned.
func metaOf(head []byte, first string, err error) (m Meta, _ error) {
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
	body := yamlPart(head)
	raw, ok := fastMeta(body)
	if !ok {
		// Not raw itself: what yaml.Unmarshal is given escapes to the
		// heap, and the fast path would pay for that on every file.
		var slow rawMeta
		if err := yaml.Unmarshal(body, &slow); err != nil {
			return Meta{Priority: Medium}, yamlError(body, err)
		}
		raw = slow
	}
	return raw.meta(head)
}

// errReader fails every read with err: what is left of a reader after a
// read that failed.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// scanHead is readHead of a stream that starts with data (and ends there if
// eof), for data of at most headBufSize bytes: within that, readHead's
// 4 KiB buffer never overflows and its 64 KiB limit never applies, so it
// is a plain scan of lines. ok is false when the answer lies beyond data.
func scanHead(data []byte, eof bool) (head []byte, firstLine string, err error, ok bool) {
	if len(data) > headBufSize {
		return nil, "", nil, false
	}
	lineNo := 0
	for pos := 0; ; {
		line := data[pos:]
		i := bytes.IndexByte(line, '\n')
		if i >= 0 {
			line = line[:i+1]
		} else if !eof || len(line) == headBufSize {
			// More to read, or a last line that fills readHead's buffer
			// (which then reads it as an overlong line).
			return nil, "", nil, false
		} else if len(line) == 0 && lineNo > 0 {
			return nil, "", neverClosed(lineNo), true
		}
		pos += len(line)
		lineNo++
		text := line
		if lineNo == 1 {
			text = bytes.TrimPrefix(text, []byte("\ufeff"))
		}
		text = bytes.TrimRight(text, " \t\r\n")
		if lineNo == 1 {
			if string(text) != "---" {
				return nil, string(text), errNoFrontmatter, true
			}
		} else if string(text) == "---" || string(text) == "..." {
			return data[:pos], "", nil, true
		}
		if i < 0 {
			return nil, "", neverClosed(lineNo), true
		}
	}
}

// yamlError turns a YAML error into one that names the line in the file.
// yaml counts lines from the first line after "---"; some of its errors
// (control characters, bad UTF-8, bad base64) name no line at all, and then
// the first line whose prefix no longer parses is the culprit.
func yamlError(body []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "unmarshal errors:\n"); ok {
		// One problem per line, each naming its own line.
		var lines []string
		for _, l := range strings.Split(rest, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
		msg = strings.Join(lines, "\n")
	}
	if msg, ok := renumberLines(msg); ok {
		return errors.New(msg)
	}
	lines := bytes.SplitAfter(body, []byte("\n"))
	end := 0
	for i, l := range lines {
		end += len(l)
		var v any
		if yaml.Unmarshal(body[:end], &v) != nil || !utf8.Valid(l) || hasControl(l) {
			return fmt.Errorf("line %d: %s", i+2, msg)
		}
	}
	return fmt.Errorf("line 2: %s", msg)
}

// renumberLines adds one to the number in every "line N" of msg, and
// reports whether there was one. (A regexp would do, but compiling it costs
// every pickup process start-up time, and it is rarely needed.)
func renumberLines(msg string) (string, bool) {
	parts := strings.Split(msg, "line ") // "line " cannot overlap itself
	found := false
	for i := 1; i < len(parts); i++ {
		if digits := len(parts[i]) - len(strings.TrimLeft(parts[i], "0123456789")); digits > 0 {
			n, _ := strconv.Atoi(parts[i][:digits])
			parts[i] = strconv.Itoa(n+1) + parts[i][digits:]
			found = true
		}
	}
	return strings.Join(parts, "line "), found
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
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

type renderMeta struct {
	Priority  string   `yaml:"priority"`
	CreatedAt string   `yaml:"created_at"`
	Title     string   `yaml:"title,omitempty"`
	Tags      []string `yaml:"tags,omitempty,flow"`
	DependsOn []string `yaml:"depends_on,omitempty,flow"`
}

// Render returns a new session file: frontmatter for m, then body.
func Render(m Meta, body []byte) []byte {
	out, err := yaml.Marshal(renderMeta{
		Priority:  m.Priority.String(),
		CreatedAt: m.CreatedAt.UTC().Format(time.RFC3339),
		Title:     m.Title,
		Tags:      m.Tags,
		DependsOn: m.DependsOn,
	})
	if err != nil {
		panic(err) // strings and string slices always marshal
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	b.Write(out)
	b.WriteString("---\n")
	if len(body) > 0 {
		b.Write(body)
		if body[len(body)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// SetField returns content with the top-level frontmatter key set to value
// (a YAML scalar, already quoted if needed), keeping every other byte of the
// file as it was: unknown fields, comments, order and the body.
func SetField(content []byte, key, value string) ([]byte, error) {
	head, _, err := readHead(bytes.NewReader(content))
	if err == errNoFrontmatter {
		return append([]byte("---\n"+key+": "+value+"\n---\n"), content...), nil
	}
	if err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(head), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var out strings.Builder
	done := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if !done && strings.HasPrefix(line, key+":") {
			out.WriteString(key + ": " + value + "\n")
			// Skip the old value's continuation lines (indented or list
			// items), and blank lines within it (a block scalar's
			// paragraphs), but not blank lines after it.
			for j := i + 1; j < len(lines)-1; j++ {
				if l := lines[j]; strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "- ") {
					if strings.TrimSpace(l) != "" {
						i = j
					}
					continue
				}
				if strings.TrimSpace(lines[j]) != "" {
					break
				}
			}
			done = true
			continue
		}
		if !done && i == len(lines)-1 {
			out.WriteString(key + ": " + value + "\n")
			done = true
		}
		out.WriteString(line)
	}
	return append([]byte(out.String()), content[len(head):]...), nil
}
