package sessions

import (
	"bytes"
	"strings"
	"time"
)

// Render returns a new session file: frontmatter for m, then body. Each
// value takes one line (see yamlInline): a multi-line title written as a
// YAML block would hold indented lines, and one that reads "---" would end
// the frontmatter for adrg/frontmatter, which ends it at any such line.
func Render(m Meta, body []byte) []byte {
	var b bytes.Buffer
	b.WriteString("---\n")
	field := func(key string, v any) {
		b.WriteString(key)
		b.WriteString(": ")
		b.WriteString(yamlInline(v))
		b.WriteByte('\n')
	}
	field("priority", m.Priority.String())
	field("created_at", m.CreatedAt.UTC().Format(time.RFC3339))
	if m.Title != "" {
		field("title", m.Title)
	}
	if len(m.Tags) > 0 {
		field("tags", m.Tags)
	}
	if len(m.DependsOn) > 0 {
		field("depends_on", m.DependsOn)
	}
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
