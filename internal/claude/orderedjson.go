package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// JSON that keeps what it does not change: members in their order, and
// every string, number and literal exactly as written. It is written back
// the way Claude Code writes its settings (JSON.stringify with two spaces).

type ojValue struct {
	kind    byte // '{' object, '[' array, 0 a string, number, true, false or null
	raw     []byte
	members []ojMember
	elems   []*ojValue
}

type ojMember struct {
	rawKey []byte // with its quotes, as written
	key    string
	val    *ojValue
}

func ojString(s string) *ojValue {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return &ojValue{raw: bytes.TrimSuffix(b.Bytes(), []byte("\n"))}
}

// get returns the value of key in an object (the last one, as JSON.parse
// does when a key repeats), or nil.
func (v *ojValue) get(key string) *ojValue {
	if v == nil || v.kind != '{' {
		return nil
	}
	for i := len(v.members) - 1; i >= 0; i-- {
		if v.members[i].key == key {
			return v.members[i].val
		}
	}
	return nil
}

func (v *ojValue) getString(key string) (string, bool) {
	x := v.get(key)
	if x == nil || x.kind != 0 || len(x.raw) == 0 || x.raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(x.raw, &s) != nil {
		return "", false
	}
	return s, true
}

func (v *ojValue) add(key string, val *ojValue) {
	v.members = append(v.members, ojMember{rawKey: ojString(key).raw, key: key, val: val})
}

// remove drops the member whose value is val.
func (v *ojValue) remove(val *ojValue) {
	for i, m := range v.members {
		if m.val == val {
			v.members = append(v.members[:i:i], v.members[i+1:]...)
			return
		}
	}
}

// encode writes v with two-space indentation and a final newline.
func (v *ojValue) encode() []byte {
	var b bytes.Buffer
	v.write(&b, 0)
	b.WriteByte('\n')
	return b.Bytes()
}

func (v *ojValue) write(b *bytes.Buffer, depth int) {
	indent := func(d int) {
		b.WriteByte('\n')
		for i := 0; i < d; i++ {
			b.WriteString("  ")
		}
	}
	switch v.kind {
	case '{':
		if len(v.members) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, m := range v.members {
			if i > 0 {
				b.WriteByte(',')
			}
			indent(depth + 1)
			b.Write(m.rawKey)
			b.WriteString(": ")
			m.val.write(b, depth+1)
		}
		indent(depth)
		b.WriteByte('}')
	case '[':
		if len(v.elems) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range v.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			indent(depth + 1)
			e.write(b, depth+1)
		}
		indent(depth)
		b.WriteByte(']')
	default:
		b.Write(v.raw)
	}
}

// parseOJ parses one JSON value. encoding/json checks the syntax first,
// so that an error names the line and column; the tree is then read from
// input known to be valid.
func parseOJ(data []byte) (*ojValue, error) {
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			at := se.Offset - 1 // the offending byte
			if strings.Contains(se.Error(), "unexpected end") {
				at = int64(len(data)) // the end of the file
			}
			line, col := ojLineCol(data, at)
			return nil, fmt.Errorf("line %d, column %d: invalid JSON: %s", line, col, se.Error())
		}
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	p := &ojParser{data: data}
	return p.value(), nil
}

// ojLineCol turns a byte offset into a 1-based line and column.
func ojLineCol(data []byte, offset int64) (int, int) {
	at := int(offset)
	if at < 0 {
		at = 0
	}
	if at > len(data) {
		at = len(data)
	}
	before := data[:at]
	line := bytes.Count(before, []byte("\n")) + 1
	col := at - bytes.LastIndexByte(before, '\n')
	return line, col
}

type ojParser struct {
	data []byte
	i    int
}

func (p *ojParser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *ojParser) value() *ojValue {
	p.space()
	switch p.data[p.i] {
	case '{':
		v := &ojValue{kind: '{'}
		p.i++
		p.space()
		if p.data[p.i] == '}' {
			p.i++
			return v
		}
		for {
			p.space()
			rawKey := p.str()
			var key string
			_ = json.Unmarshal(rawKey, &key)
			p.space()
			p.i++ // ':'
			v.members = append(v.members, ojMember{rawKey: rawKey, key: key, val: p.value()})
			p.space()
			c := p.data[p.i]
			p.i++ // ',' or '}'
			if c == '}' {
				return v
			}
		}
	case '[':
		v := &ojValue{kind: '['}
		p.i++
		p.space()
		if p.data[p.i] == ']' {
			p.i++
			return v
		}
		for {
			v.elems = append(v.elems, p.value())
			p.space()
			c := p.data[p.i]
			p.i++ // ',' or ']'
			if c == ']' {
				return v
			}
		}
	case '"':
		return &ojValue{raw: p.str()}
	default:
		start := p.i
		for p.i < len(p.data) && !bytes.ContainsRune([]byte(" \t\r\n,]}"), rune(p.data[p.i])) {
			p.i++
		}
		return &ojValue{raw: p.data[start:p.i]}
	}
}

// str reads a string token, quotes included.
func (p *ojParser) str() []byte {
	start := p.i
	p.i++
	for {
		switch p.data[p.i] {
		case '\\':
			p.i += 2
		case '"':
			p.i++
			return p.data[start:p.i]
		default:
			p.i++
		}
	}
}

// ojEqual reports whether a and b are the same JSON value, whatever their
// layout, key order or number spelling.
func ojEqual(a, b *ojValue) bool {
	var x, y any
	if json.Unmarshal(a.encode(), &x) != nil || json.Unmarshal(b.encode(), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// ojClone returns a deep copy of v.
func ojClone(v *ojValue) *ojValue {
	c := &ojValue{kind: v.kind, raw: v.raw}
	for _, m := range v.members {
		c.members = append(c.members, ojMember{rawKey: m.rawKey, key: m.key, val: ojClone(m.val)})
	}
	for _, e := range v.elems {
		c.elems = append(c.elems, ojClone(e))
	}
	return c
}
