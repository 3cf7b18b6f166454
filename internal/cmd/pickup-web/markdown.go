package main

import (
	"html"
	"html/template"
	"strings"
)

// splitFrontmatter returns a session file's YAML frontmatter (without its
// --- lines) and its body.
func splitFrontmatter(text string) (head, body string) {
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return "", text
	}
	if i := strings.Index(rest, "\n---\n"); i >= 0 {
		return rest[:i], rest[i+5:]
	}
	if h, ok := strings.CutSuffix(rest, "\n---"); ok {
		return h, ""
	}
	return "", text
}

// markdown renders the common part of markdown that sessions are written
// in (headings, paragraphs, lists, fenced code, quotes, `code`, **bold**)
// as HTML. It is its own small renderer so that nothing of the text ever
// reaches the page as markup: every piece is escaped, raw HTML in the
// body shows as the text it is, and links are not made (a session's text
// never sends anyone elsewhere).
func markdown(src string) template.HTML {
	var b strings.Builder
	lines := strings.Split(src, "\n")
	para := []string{}
	list := "" // "ul" or "ol" while in a list
	flush := func() {
		if len(para) > 0 {
			b.WriteString("<p>" + inline(strings.Join(para, " ")) + "</p>\n")
			para = para[:0]
		}
	}
	endList := func() {
		if list != "" {
			b.WriteString("</" + list + ">\n")
			list = ""
		}
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trim := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trim, "```"):
			flush()
			endList()
			b.WriteString("<pre><code>")
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
				b.WriteString(html.EscapeString(lines[i]) + "\n")
			}
			b.WriteString("</code></pre>\n")
		case trim == "":
			flush()
			endList()
		case strings.HasPrefix(trim, "#"):
			flush()
			endList()
			n := len(trim) - len(strings.TrimLeft(trim, "#"))
			if n > 6 || len(trim) > n && trim[n] != ' ' {
				para = append(para, trim)
				continue
			}
			lvl := string(rune('0' + min(n+1, 6))) // the page's h1 is the board's
			b.WriteString("<h" + lvl + ">" + inline(strings.TrimSpace(trim[n:])) + "</h" + lvl + ">\n")
		case strings.HasPrefix(trim, "- ") || strings.HasPrefix(trim, "* ") || strings.HasPrefix(trim, "+ "):
			flush()
			if list != "ul" {
				endList()
				b.WriteString("<ul>\n")
				list = "ul"
			}
			b.WriteString("<li>" + inline(trim[2:]) + "</li>\n")
		case orderedItem(trim) > 0:
			flush()
			if list != "ol" {
				endList()
				b.WriteString("<ol>\n")
				list = "ol"
			}
			b.WriteString("<li>" + inline(strings.TrimSpace(trim[orderedItem(trim):])) + "</li>\n")
		case strings.HasPrefix(trim, ">"):
			flush()
			endList()
			b.WriteString("<blockquote>" + inline(strings.TrimSpace(trim[1:])) + "</blockquote>\n")
		default:
			endList()
			para = append(para, trim)
		}
	}
	flush()
	endList()
	return template.HTML(b.String())
}

// orderedItem returns the length of "12. " at the start of s, or 0.
func orderedItem(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i < 10 && i+1 < len(s) && (s[i] == '.' || s[i] == ')') && s[i+1] == ' ' {
		return i + 2
	}
	return 0
}

// inline escapes s and marks `code` and **bold**.
func inline(s string) string {
	var b strings.Builder
	for s != "" {
		if rest, ok := strings.CutPrefix(s, "`"); ok {
			if j := strings.IndexByte(rest, '`'); j >= 0 {
				b.WriteString("<code>" + html.EscapeString(rest[:j]) + "</code>")
				s = rest[j+1:]
				continue
			}
		}
		if rest, ok := strings.CutPrefix(s, "**"); ok {
			if j := strings.Index(rest, "**"); j > 0 {
				b.WriteString("<strong>" + html.EscapeString(rest[:j]) + "</strong>")
				s = rest[j+2:]
				continue
			}
		}
		j := strings.IndexAny(s[1:], "`*")
		if j < 0 {
			b.WriteString(html.EscapeString(s))
			break
		}
		b.WriteString(html.EscapeString(s[:j+1]))
		s = s[j+1:]
	}
	return b.String()
}
