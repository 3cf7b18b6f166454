package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
)

// An update costs what changed, not the whole board: the hub renders the
// whole board with the one template (every byte escaped by html/template)
// and cuts the rendering into its keyed parts, then sends a page only the
// parts whose bytes changed since the rendering the page has.
//
// The template marks the parts: an element with data-list (and an id) is
// a list whose children each carry a data-key, unique in the list (a
// session id, an owner's name, a section's name). A patch names, for each
// list that changed, its keys in order and the bytes of every child that
// is new or changed; the page keeps the nodes of the others as they are.
// A child that holds lists itself (a section) counts as changed only when
// its own tags change, not its lists' children: those go in its lists'
// own entries.

// part is one keyed child of a list: its bytes in the rendering, and its
// shell (the bytes less the insides of the lists it holds), which says
// whether the part itself changed.
type part struct {
	key         string
	html, shell string
}

// list is one data-list element's children, in order.
type list struct {
	id    string
	parts []part
	// in is the part that holds this list (its list and key), "" for a
	// list of the board itself.
	inList, inKey string
}

// cut is a rendering cut into its parts.
type cut struct {
	root  string // the board's own opening tag (its data-updated, data-known)
	lists []list // in the order of the rendering
}

// voids are the elements with no end tag.
var voids = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true, "input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true}

// cutRendering cuts the board's rendering into its lists and parts. The
// rendering is html/template's, so that outside tags a '<' is always a
// tag's start and in a tag a '>' always its end (both are escaped in text
// and in quoted attributes).
func cutRendering(b []byte) (*cut, error) {
	type open struct {
		name       string
		start, end int    // the element's '<', and past its opening tag's '>'
		key        string // data-key, if it has one
		list       int    // its index in c.lists if data-list, else -1
		cuts       [][2]int
	}
	c := &cut{}
	var stack []*open
	seen := map[string]bool{}
	// keyed is the innermost open keyed element, which a list's insides
	// are cut from.
	keyed := func() *open {
		for i := len(stack) - 1; i >= 0; i-- {
			if stack[i].key != "" {
				return stack[i]
			}
		}
		return nil
	}
	closed := func(o *open, end int) error {
		if o.list >= 0 {
			// A list's insides are cut from its own shell if it is
			// keyed itself, else from the part that holds it.
			k := o
			if o.key == "" {
				k = keyed()
			}
			if k != nil {
				k.cuts = append(k.cuts, [2]int{o.end, end - len("</"+o.name+">")})
			}
		}
		if o.key == "" {
			return nil
		}
		var parent *open
		if len(stack) > 0 {
			parent = stack[len(stack)-1]
		}
		if parent == nil || parent.list < 0 {
			return fmt.Errorf("cut the board's rendering: the element keyed %q is not a child of a data-list element", o.key)
		}
		var shell bytes.Buffer
		at := o.start
		for _, r := range o.cuts {
			shell.Write(b[at:r[0]])
			at = r[1]
		}
		shell.Write(b[at:end])
		l := &c.lists[parent.list]
		l.parts = append(l.parts, part{key: o.key, html: string(b[o.start:end]), shell: shell.String()})
		return nil
	}
	for i := 0; i < len(b); {
		lt := bytes.IndexByte(b[i:], '<')
		if lt < 0 {
			break
		}
		lt += i
		gt := bytes.IndexByte(b[lt:], '>')
		if gt < 0 {
			return nil, fmt.Errorf("cut the board's rendering: a tag at byte %d does not end", lt)
		}
		gt += lt + 1
		tag := b[lt+1 : gt-1]
		i = gt
		switch {
		case len(tag) > 0 && tag[0] == '!': // a comment or doctype
			if bytes.HasPrefix(tag, []byte("!--")) {
				end := bytes.Index(b[lt:], []byte("-->"))
				if end < 0 {
					return nil, fmt.Errorf("cut the board's rendering: a comment at byte %d does not end", lt)
				}
				i = lt + end + 3
			}
		case len(tag) > 0 && tag[0] == '/':
			name := string(bytes.TrimSpace(tag[1:]))
			if len(stack) == 0 || stack[len(stack)-1].name != name {
				return nil, fmt.Errorf("cut the board's rendering: </%s> at byte %d closes no open element", name, lt)
			}
			o := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if err := closed(o, gt); err != nil {
				return nil, err
			}
		default:
			name, attrs := tagAttrs(tag)
			o := &open{name: name, start: lt, end: gt, key: attrs["data-key"], list: -1}
			if o.key != "" {
				if len(stack) == 0 || stack[len(stack)-1].list < 0 {
					return nil, fmt.Errorf("cut the board's rendering: the element keyed %q is not a child of a data-list element", o.key)
				}
				lid := c.lists[stack[len(stack)-1].list].id
				if seen[lid+"\x00"+o.key] {
					return nil, fmt.Errorf("cut the board's rendering: the key %q is twice in the list %q", o.key, lid)
				}
				seen[lid+"\x00"+o.key] = true
			}
			if _, ok := attrs["data-list"]; ok {
				if attrs["id"] == "" {
					return nil, fmt.Errorf("cut the board's rendering: a data-list element at byte %d has no id", lt)
				}
				l := list{id: attrs["id"]}
				// The part that holds this list, and the list that
				// holds that part (a keyed element's parent is always
				// a list, checked as it opened).
				if k := keyed(); k != nil {
					for j := len(stack) - 1; j > 0; j-- {
						if stack[j] == k {
							l.inList, l.inKey = c.lists[stack[j-1].list].id, k.key
							break
						}
					}
				}
				o.list = len(c.lists)
				c.lists = append(c.lists, l)
			}
			if c.root == "" && len(stack) == 0 {
				c.root = string(b[lt:gt])
			}
			if voids[name] || bytes.HasSuffix(tag, []byte("/")) {
				if err := closed(o, gt); err != nil {
					return nil, err
				}
				continue
			}
			stack = append(stack, o)
		}
	}
	if len(stack) > 0 {
		return nil, fmt.Errorf("cut the board's rendering: <%s> does not end", stack[len(stack)-1].name)
	}
	return c, nil
}

// tagAttrs parses an opening tag's name and attributes (values unescaped:
// the page reads them unescaped too).
func tagAttrs(tag []byte) (string, map[string]string) {
	tag = bytes.TrimSuffix(tag, []byte("/"))
	n := bytes.IndexAny(tag, " \t\n\r\f")
	if n < 0 {
		return string(tag), nil
	}
	name, rest := string(tag[:n]), tag[n:]
	attrs := map[string]string{}
	for {
		rest = bytes.TrimLeft(rest, " \t\n\r\f")
		if len(rest) == 0 {
			return name, attrs
		}
		end := bytes.IndexAny(rest, "= \t\n\r\f")
		if end < 0 {
			attrs[string(rest)] = ""
			return name, attrs
		}
		k := string(rest[:end])
		rest = rest[end:]
		if rest[0] != '=' {
			attrs[k] = ""
			continue
		}
		rest = rest[1:]
		var v []byte
		if len(rest) > 0 && (rest[0] == '"' || rest[0] == '\'') {
			q := bytes.IndexByte(rest[1:], rest[0])
			if q < 0 {
				q = len(rest) - 1
			}
			v, rest = rest[1:1+q], rest[min(len(rest), q+2):]
		} else {
			sp := bytes.IndexAny(rest, " \t\n\r\f")
			if sp < 0 {
				sp = len(rest)
			}
			v, rest = rest[:sp], rest[sp:]
		}
		attrs[k] = html.UnescapeString(string(v))
	}
}

// listPatch is one list's entry in a patch: its children in order, and
// the bytes of those that are new or changed. Keys names them as runs:
// a string is the key of a child new or changed (its bytes in HTML), a
// pair [i, n] the n children kept from the list as it was, from its i-th
// (from 0): a row gone from the top of 400 is [[1, 399]], not 399 keys.
type listPatch struct {
	ID   string            `json:"id"`
	Keys []any             `json:"keys"`
	HTML map[string]string `json:"html,omitempty"`
}

// patch is what turns the rendering from into the rendering to.
type patch struct {
	Base  uint64      `json:"base"` // the version of from
	Root  string      `json:"root,omitempty"`
	Lists []listPatch `json:"lists,omitempty"`
}

// diff makes the patch from one cut rendering to the next, nil when they
// are the same.
func diff(from, to *cut, base uint64) *patch {
	p := &patch{Base: base}
	if from.root != to.root {
		p.Root = to.root
	}
	type was struct {
		shell string
		at    int
	}
	old := map[string]map[string]was{} // list → key → its shell and place
	for _, l := range from.lists {
		m := map[string]was{}
		for i, pt := range l.parts {
			m[pt.key] = was{pt.shell, i}
		}
		old[l.id] = m
	}
	// whole: the parts sent whole (list and key): the lists inside them
	// come with them.
	whole := map[string]bool{}
	for _, l := range to.lists {
		if l.inList != "" && whole[l.inList+"\x00"+l.inKey] {
			for _, pt := range l.parts {
				whole[l.id+"\x00"+pt.key] = true
			}
			continue
		}
		prev, had := old[l.id]
		lp := listPatch{ID: l.id, Keys: []any{}, HTML: map[string]string{}}
		same := had && len(prev) == len(l.parts)
		var run *[2]int // the run of kept children being added to
		for i, pt := range l.parts {
			w, ok := prev[pt.key]
			if !ok || w.shell != pt.shell {
				lp.HTML[pt.key] = pt.html
				lp.Keys = append(lp.Keys, pt.key)
				whole[l.id+"\x00"+pt.key] = true
				same, run = false, nil
				continue
			}
			if w.at != i {
				same = false
			}
			if run != nil && run[0]+run[1] == w.at {
				run[1]++
				continue
			}
			lp.Keys = append(lp.Keys, &[2]int{w.at, 1})
			run = lp.Keys[len(lp.Keys)-1].(*[2]int)
		}
		if !same {
			p.Lists = append(p.Lists, lp)
		}
	}
	if p.Root == "" && len(p.Lists) == 0 {
		return nil
	}
	return p
}

// json is the patch as one line of JSON. Not HTML-escaped: it goes to
// JSON.parse, never into a page as markup, and a row's every '<' as
// \u003c made patches half as large again.
func (p *patch) json() []byte {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(p)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
