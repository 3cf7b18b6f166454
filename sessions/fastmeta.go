package sessions

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// fastMeta decodes the YAML between the frontmatter's delimiter lines into
// exactly what yaml.Unmarshal would put in a rawMeta, without yaml, for the
// flat frontmatter that Render writes and that people type: top-level
// "key: value" lines whose values are plain or simply quoted scalars, flow
// lists "[a, b]" or block lists "- a", with blank and comment lines between
// them. A cold listing of a big board parses every file, and yaml takes
// 10 to 20 µs a file where this takes about half of one.
//
// It returns ok false for anything it is not sure of (escapes, multi-line
// scalars, anchors, tags, nesting, tabs where YAML is picky about them,
// duplicate keys, characters YAML refuses or treats as line breaks) and the
// caller then uses yaml, which also produces every error: ok true means raw
// is what yaml gives and yaml would not have failed. FuzzFastMeta checks
// that against yaml.
func fastMeta(body []byte) (raw rawMeta, ok bool) {
	if !plainText(body) {
		return rawMeta{}, false
	}
	var seen uint8        // the known keys met so far, one bit each
	var buf [8]yamlScalar // room for a list's items without allocating
	for len(body) > 0 {
		var line []byte
		line, body = nextLine(body)
		if isBlankOrComment(line) {
			continue
		}
		key, rest, ok := cutKey(line)
		if !ok {
			return rawMeta{}, false // indented, a list item, or not a key
		}
		field := knownKey(key)
		if field != 0 {
			if seen&field != 0 {
				return rawMeta{}, false // yaml keeps the last; keyLine names the first
			}
			seen |= field
		}
		rest = trimSpaces(rest)
		if len(rest) == 0 || rest[0] == '#' {
			// No value on the line: null, or a block list below it.
			items, after, isList, ok := blockList(body, buf[:0])
			if !ok {
				return rawMeta{}, false
			}
			if isList {
				body = after
				if !raw.setList(field, items) {
					return rawMeta{}, false
				}
			}
			continue // else null: the zero value the field has
		}
		if rest[0] == '[' {
			items, ok := flowList(rest, buf[:0])
			if !ok || !raw.setList(field, items) {
				return rawMeta{}, false
			}
			continue
		}
		v, ok := scalar(rest)
		if !ok || !raw.setScalar(field, v) {
			return rawMeta{}, false
		}
	}
	return raw, true
}

// The known keys, as bits of fastMeta's seen set. 0 is any other key: its
// value is checked but not decoded, as yaml does.
const (
	fieldPriority uint8 = 1 << iota
	fieldCreatedAt
	fieldTitle
	fieldTags
	fieldDependsOn
	fieldAttempts
)

func knownKey(key []byte) uint8 {
	switch string(key) {
	case "priority":
		return fieldPriority
	case "created_at":
		return fieldCreatedAt
	case "title":
		return fieldTitle
	case "tags":
		return fieldTags
	case "depends_on":
		return fieldDependsOn
	case "attempts":
		return fieldAttempts
	}
	return 0
}

// yamlScalar is a single-line scalar as yaml reads it.
type yamlScalar struct {
	text  []byte // the value, quotes removed
	plain bool   // unquoted: yaml resolves it (null, numbers)
}

// isNull reports whether yaml resolves the scalar to null, which decodes
// as the zero value.
func (s yamlScalar) isNull() bool {
	switch string(s.text) {
	case "", "~", "null", "Null", "NULL":
		return s.plain
	}
	return false
}

// setScalar stores a scalar. A null leaves the field at its zero value,
// which it still has: fastMeta refuses a known key seen twice.
func (raw *rawMeta) setScalar(field uint8, v yamlScalar) bool {
	if v.isNull() {
		return true
	}
	switch field {
	case fieldPriority:
		switch string(v.text) { // the usual ones without allocating
		case "high":
			raw.Priority = "high"
		case "medium":
			raw.Priority = "medium"
		case "low":
			raw.Priority = "low"
		default:
			raw.Priority = string(v.text)
		}
	case fieldCreatedAt:
		raw.CreatedAt = string(v.text)
	case fieldTitle:
		raw.Title = string(v.text)
	case fieldTags:
		raw.Tags = commaList(v.text)
	case fieldDependsOn:
		raw.DependsOn = commaList(v.text)
	case fieldAttempts:
		var ok bool
		raw.Attempts, ok = smallInt(v)
		return ok // else yaml's number syntax, or its type error
	}
	return true
}

// setList stores a sequence: only the list fields (and unknown keys) take
// one; yaml fails on the others.
func (raw *rawMeta) setList(field uint8, items []yamlScalar) bool {
	if field != fieldTags && field != fieldDependsOn {
		return field == 0
	}
	list := make([]string, len(items)) // not nil even for "[]", as yaml
	for i, it := range items {
		if !it.isNull() { // else "", as yaml decodes a null string
			list[i] = string(it.text)
		}
	}
	if field == fieldTags {
		raw.Tags = list
	} else {
		raw.DependsOn = list
	}
	return true
}

// commaList is stringList's reading of a scalar: comma-separated, blanks
// trimmed, empty parts dropped.
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

// smallInt parses a plain decimal without sign or leading zero, small
// enough that yaml's reading of it (which also knows octal, hex, "_" and
// floats) is the same number.
func smallInt(v yamlScalar) (n int, ok bool) {
	t := v.text
	ok = v.plain && len(t) > 0 && len(t) <= 18 && (t[0] != '0' || len(t) == 1)
	for _, c := range t {
		ok = ok && '0' <= c && c <= '9'
		n = n*10 + int(c-'0')
	}
	return n, ok
}

// plainText reports whether b holds only characters yaml reads as plain
// text: printable ASCII, tab, LF, CR before LF, and valid UTF-8 in the
// ranges yaml accepts, minus the ones it treats as line breaks (NEL, LS,
// PS) or skips (a byte-order mark).
func plainText(b []byte) bool {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && (c != '\r' || i+1 == len(b) || b[i+1] != '\n') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case size == 1: // invalid
			return false
		case r == 0x2028, r == 0x2029, r == 0xfeff:
			return false
		case r >= 0xa0 && r <= 0xd7ff, r >= 0xe000 && r <= 0xfffd, r >= 0x10000:
		default: // C1 controls (NEL among them), 0xfffe, 0xffff
			return false
		}
		i += size
	}
	return true
}

// nextLine splits off the first line of b, without its "\n" or "\r\n".
func nextLine(b []byte) (line, rest []byte) {
	line, rest, _ = bytes.Cut(b, []byte("\n"))
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, rest
}

// isBlankOrComment reports whether line is empty, spaces, or a comment
// indented with spaces. Tabs there can be errors to yaml.
func isBlankOrComment(line []byte) bool {
	rest := trimSpaces(line)
	return len(rest) == 0 || rest[0] == '#'
}

func trimSpaces(b []byte) []byte {
	for len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	return b
}

// cutKey splits a top-level "key:" line: a key of letters, digits, '_'
// and '-' at column 0, then ':' and a space or the end of the line.
func cutKey(line []byte) (key, rest []byte, ok bool) {
	i := 0
	for i < len(line) && i <= 64 && (isLetter(line[i]) || i > 0 && (isDigit(line[i]) || line[i] == '-')) {
		i++
	}
	if i == 0 || i > 64 || i == len(line) || line[i] != ':' {
		return nil, nil, false
	}
	rest = line[i+1:]
	if len(rest) > 0 && rest[0] != ' ' {
		return nil, nil, false
	}
	return line[:i], rest, true
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }

// blockList appends to items the "- item" lines that may follow a key
// without a value, all at one indentation, each a single-line scalar.
// isList is false (and after is body) if the next line that is not blank or
// a comment is at column 0 and no item: another key, or something fastMeta
// refuses. ok is false for anything else indented under the key.
func blockList(body []byte, items []yamlScalar) (_ []yamlScalar, after []byte, isList, ok bool) {
	indent := -1
	rest := body
	for len(rest) > 0 {
		line, next := nextLine(rest)
		if isBlankOrComment(line) {
			rest = next
			continue
		}
		n := len(line) - len(trimSpaces(line))
		item, isItem := bytes.CutPrefix(line[n:], []byte("- "))
		if !isItem && n == 0 {
			break // the next top-level line ends the list
		}
		if !isItem || indent >= 0 && n != indent {
			return nil, nil, false, false // a nested value, or a ragged list
		}
		item = trimSpaces(item)
		if len(item) == 0 || item[0] == '#' {
			return nil, nil, false, false // a null item
		}
		v, ok := scalar(item)
		if !ok {
			return nil, nil, false, false
		}
		indent = n
		items = append(items, v)
		rest = next
	}
	if indent < 0 {
		return nil, body, false, true
	}
	return items, rest, true, true
}

// scalar reads a value that starts at s[0] and takes the rest of the line:
// a plain scalar (up to a comment) or a quoted one (then only a comment may
// follow).
func scalar(s []byte) (yamlScalar, bool) {
	switch s[0] {
	case '\'', '"':
		v, rest, ok := quoted(s)
		if !ok {
			return yamlScalar{}, false
		}
		if !onlyComment(rest) {
			return yamlScalar{}, false
		}
		return v, true
	}
	if isIndicator(s[0]) || s[0] == '\t' {
		return yamlScalar{}, false
	}
	end := len(s)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ':':
			if i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\t' {
				return yamlScalar{}, false // a mapping inside the value
			}
		case '#':
			if s[i-1] == ' ' || s[i-1] == '\t' {
				end = i
			}
		}
		if end < len(s) {
			break
		}
	}
	return yamlScalar{text: bytes.TrimRight(s[:end], " \t"), plain: true}, true
}

// quoted reads a single- or double-quoted scalar that ends on its line and
// has no escapes but a doubled quote in single quotes.
func quoted(s []byte) (v yamlScalar, rest []byte, ok bool) {
	q, doubled := s[0], false
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == '\\' && q == '"':
			return yamlScalar{}, nil, false
		case s[i] != q:
		case q == '\'' && i+1 < len(s) && s[i+1] == '\'':
			doubled = true
			i++
		default:
			text := s[1:i]
			if doubled {
				text = bytes.ReplaceAll(text, []byte("''"), []byte("'"))
			}
			return yamlScalar{text: text}, s[i+1:], true
		}
	}
	return yamlScalar{}, nil, false // continues on the next line
}

// flowList appends to items those of a "[a, 'b', c]" list that ends on its
// line, with plain items that contain no flow indicators, ':' or '#'.
func flowList(s []byte, items []yamlScalar) ([]yamlScalar, bool) {
	s = trimSpaces(s[1:])
	for {
		if len(s) == 0 || s[0] == '\t' {
			return nil, false
		}
		if s[0] == ']' && len(items) == 0 {
			s = s[1:]
			break
		}
		var v yamlScalar
		switch s[0] {
		case '\'', '"':
			var ok bool
			if v, s, ok = quoted(s); !ok {
				return nil, false
			}
		default:
			if isIndicator(s[0]) {
				return nil, false
			}
			end := bytes.IndexAny(s, ",]")
			if end < 0 || bytes.ContainsAny(s[:end], "[{}#:?\t") {
				return nil, false
			}
			v = yamlScalar{text: bytes.TrimRight(s[:end], " "), plain: true}
			s = s[end:]
		}
		items = append(items, v)
		s = trimSpaces(s)
		if len(s) == 0 {
			return nil, false
		}
		if s[0] == ']' {
			s = s[1:]
			break
		}
		if s[0] != ',' {
			return nil, false
		}
		if s = trimSpaces(s[1:]); len(s) > 0 && s[0] == ']' {
			return nil, false // a trailing comma
		}
	}
	return items, onlyComment(s)
}

// onlyComment reports whether what follows a value on its line is nothing
// but spaces and perhaps a comment, which needs a space before its '#'.
func onlyComment(s []byte) bool {
	rest := trimSpaces(s)
	return len(rest) == 0 || rest[0] == '#' && len(rest) < len(s)
}

// isIndicator reports whether c is a YAML indicator, which cannot start a
// plain scalar (or can only in ways left to yaml).
func isIndicator(c byte) bool { return strings.IndexByte("-?:,[]{}#&*!|>'\"%@`", c) >= 0 }
