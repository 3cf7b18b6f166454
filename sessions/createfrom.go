package sessions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v2"
)

// ErrBadFrontmatter: a file given as a new session has frontmatter that
// pickup cannot read. CreateFrom returns it as a *FrontmatterError, which
// names each line.
var ErrBadFrontmatter = errors.New("broken frontmatter")

// FrontmatterError is the broken frontmatter of a file given to CreateFrom.
type FrontmatterError struct {
	File     string // as the caller names it: a path, or "stdin"
	Problems []Problem
}

// Problem is one thing wrong in a file, on a line of it (1-based, the
// opening "---" being line 1).
type Problem struct {
	Line int
	Msg  string
}

// Error names every problem as FILE:LINE, the way compilers do, so that an
// editor or an agent can jump to it.
func (e *FrontmatterError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = fmt.Sprintf("%s:%d: %s: %s", e.File, p.Line, ErrBadFrontmatter, p.Msg)
	}
	return strings.Join(parts, "; ")
}

func (e *FrontmatterError) Unwrap() error { return ErrBadFrontmatter }

// Hint says what to do about it (pickup prints it after the error).
func (e *FrontmatterError) Hint() string {
	return fmt.Sprintf("fix line %d of %s (the YAML between its first two \"---\" lines); nothing was created", e.Problems[0].Line, e.File)
}

// problemsOf splits what parsing frontmatter returned ("line N: msg", one
// per line) into problems.
func problemsOf(err error) []Problem {
	if err == nil {
		return nil
	}
	var out []Problem
	for _, msg := range strings.Split(err.Error(), "\n") {
		p := Problem{Line: 1, Msg: msg}
		if rest, ok := strings.CutPrefix(msg, "line "); ok {
			digits := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
			if after, ok := strings.CutPrefix(rest[digits:], ": "); ok && digits > 0 {
				p.Line, _ = strconv.Atoi(rest[:digits])
				p.Msg = after
			}
		}
		out = append(out, p)
	}
	return out
}

// Override is what a caller sets over the fields of a file given to
// CreateFrom (the flags of `pickup new`): a nil field keeps the file's.
type Override struct {
	Priority  *Priority
	Title     *string
	Tags      []string
	DependsOn []string
}

// CreateFrom creates a session from a whole file as a person or an agent
// writes one: frontmatter in the README's format, then the body. Its
// fields are used as written and every byte of it is kept, but for what
// pickup sets: created_at (now, which the id also says: a new session is
// new, whatever the file was copied from), attempts (back to 0, as it has
// never run) and the fields o replaces. With no title in either, the body's
// "# Heading" gives it.
//
// Frontmatter that does not parse is refused with a *FrontmatterError
// before anything is created; so is a tags list with an empty tag or one
// that holds a comma (which separates tags: it would read back as two). A
// file without frontmatter is the body of a session made by Create from
// o's fields, as `pickup new` always did.
func (b *Board) CreateFrom(name string, content []byte, o Override) (Session, error) {
	head, first, err := readHead(bytes.NewReader(content))
	if err == errNoFrontmatter {
		m := Meta{Priority: Medium}
		if t, ok := strings.CutPrefix(first, "# "); ok {
			m.Title = strings.TrimSpace(t)
		}
		o.apply(&m)
		return b.Create(m, content)
	}
	if err != nil {
		return Session{}, &FrontmatterError{File: name, Problems: problemsOf(err)}
	}
	m, err := metaOf(head, "", nil)
	problems := append(problemsOf(err), tagProblems(head, m.Tags)...)
	if len(problems) > 0 {
		slices.SortStableFunc(problems, func(a, b Problem) int { return a.Line - b.Line })
		return Session{}, &FrontmatterError{File: name, Problems: problems}
	}
	for _, dep := range o.DependsOn {
		if err := ValidateID(dep); err != nil {
			return Session{}, fmt.Errorf("depends_on: %w", err)
		}
	}
	now := b.now()
	out, m, err := rewrite(content, head, m, o, now.Truncate(time.Second))
	if err != nil {
		return Session{}, fmt.Errorf("create session from %s: %w", name, err)
	}
	return b.publish(now, "", m, out)
}

// apply sets the fields o replaces.
func (o Override) apply(m *Meta) {
	if o.Priority != nil {
		m.Priority = *o.Priority
	}
	if o.Title != nil {
		m.Title = *o.Title
	}
	if o.Tags != nil {
		m.Tags = o.Tags
	}
	if o.DependsOn != nil {
		m.DependsOn = o.DependsOn
	}
}

// rewrite returns content with created_at, attempts and the fields o
// replaces set in its frontmatter (head), and the session's metadata.
// Lines it does not set keep their bytes, comments included.
func rewrite(content, head []byte, m Meta, o Override, created time.Time) ([]byte, Meta, error) {
	var err error
	// A file written with CRLF line ends gets CRLF lines from pickup too
	// (SetField ends a line with "\n": the "\r" goes before it).
	eol := ""
	if bytes.HasSuffix(bytes.TrimRight(head, "\n"), []byte("\r")) {
		eol = "\r"
	}
	set := func(key, value string) {
		if err == nil {
			content, err = SetField(content, key, value+eol)
		}
	}
	if o.Title == nil && m.Title == "" {
		line, _, _ := bytes.Cut(content[len(head):], []byte("\n"))
		if t, ok := strings.CutPrefix(string(line), "# "); ok && strings.TrimSpace(t) != "" {
			title := strings.TrimSpace(t)
			o.Title = &title
		}
	}
	m.CreatedAt = created
	set("created_at", strconv.Quote(created.UTC().Format(time.RFC3339)))
	if m.Attempts != 0 {
		m.Attempts = 0
		set("attempts", "0")
	}
	o.apply(&m)
	if o.Priority != nil {
		set("priority", m.Priority.String())
	}
	if o.Title != nil {
		set("title", yamlInline(m.Title))
	}
	if o.Tags != nil {
		set("tags", yamlInline(m.Tags))
	}
	if o.DependsOn != nil {
		set("depends_on", yamlInline(m.DependsOn))
	}
	if err != nil {
		return nil, m, err
	}
	// What is stored must say what the caller was told: read it back.
	got, err := ParseMeta(bytes.NewReader(content))
	if err == nil && (got.Priority != m.Priority || got.Title != m.Title || !got.CreatedAt.Equal(m.CreatedAt) ||
		!slices.Equal(got.Tags, m.Tags) || !slices.Equal(got.DependsOn, m.DependsOn) || got.Attempts != 0) {
		err = errors.New("the rewritten frontmatter reads back differently")
	}
	if err != nil {
		return nil, m, fmt.Errorf("rewrite frontmatter: %w", err)
	}
	return content, m, nil
}

// tagProblems checks a file's tags against the tag rule: a comma separates
// tags, so none holds one, and none is empty.
func tagProblems(head []byte, tags []string) []Problem {
	for _, t := range tags {
		switch {
		case strings.TrimSpace(t) == "":
			return []Problem{{Line: keyLine(head, "tags"), Msg: "tags: an empty tag: remove it"}}
		case strings.Contains(t, ","):
			var split []string
			for _, t := range tags {
				split = append(split, commaList([]byte(t))...)
			}
			return []Problem{{Line: keyLine(head, "tags"),
				Msg: fmt.Sprintf("tags: %q holds a comma, which separates tags: write tags: %s", t, yamlInline(split))}}
		}
	}
	return nil
}

// yamlInline writes a string or a list of strings as a YAML value on one
// line: as yaml writes it when it does (plain or quoted scalars, a flow
// list), else as JSON, which YAML reads the same (a multi-line title).
func yamlInline(v any) string {
	out, err := yaml.Marshal(struct {
		V any `yaml:"v,flow"`
	}{v})
	text, ok := strings.CutPrefix(strings.TrimSuffix(string(out), "\n"), "v: ")
	if err == nil && ok && !strings.Contains(text, "\n") {
		return text
	}
	j, _ := json.Marshal(v) // strings and string slices always marshal
	return string(j)
}
