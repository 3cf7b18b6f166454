package sessions

import (
	"bytes"
	"strings"
	"time"

	"gopkg.in/yaml.v2"
)

type renderMeta struct {
	Priority  string   `yaml:"priority"`
	CreatedAt string   `yaml:"created_at"`
	Title     string   `yaml:"title,omitempty"`
	Tags      []string `yaml:"tags,omitempty,flow"`
	DependsOn []string `yaml:"depends_on,omitempty,flow"`
}

// Render returns a new session file: frontmatter for m, then body. Each
// value takes one line: a multi-line title written as a YAML block would
// hold indented lines, and one that reads "---" would end the frontmatter
// for adrg/frontmatter, which ends it at any such line. yaml writes the
// usual values on one line each; when it does not, each value is written
// on its own as yamlInline writes it (as JSON if need be).
func Render(m Meta, body []byte) []byte {
	r := renderMeta{
		Priority:  m.Priority.String(),
		CreatedAt: m.CreatedAt.UTC().Format(time.RFC3339),
		Title:     m.Title,
		Tags:      m.Tags,
		DependsOn: m.DependsOn,
	}
	out, err := yaml.Marshal(r)
	if err != nil {
		panic(err) // strings and string slices always marshal
	}
	lines := 2
	for _, set := range []bool{r.Title != "", len(r.Tags) > 0, len(r.DependsOn) > 0} {
		if set {
			lines++
		}
	}
	if bytes.Count(out, []byte("\n")) != lines {
		var b bytes.Buffer
		field := func(key string, v any) {
			b.WriteString(key + ": " + yamlInline(v) + "\n")
		}
		field("priority", r.Priority)
		field("created_at", r.CreatedAt)
		if r.Title != "" {
			field("title", r.Title)
		}
		if len(r.Tags) > 0 {
			field("tags", r.Tags)
		}
		if len(r.DependsOn) > 0 {
			field("depends_on", r.DependsOn)
		}
		out = b.Bytes()
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
