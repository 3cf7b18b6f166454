package sessions

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestNewTagFilter(t *testing.T) {
	tests := []struct {
		tags, not []string
		err       string // "" for none
	}{
		{nil, nil, ""},
		{[]string{"docs", "docs"}, []string{"wip"}, ""},
		{[]string{"needs review"}, nil, ""},
		{[]string{""}, nil, "an empty tag"},
		{nil, []string{" "}, "an empty tag"},
		{[]string{"a,b"}, nil, `tag "a,b" holds a comma`},
		{[]string{" a"}, nil, `tag " a" has blanks`},
		{[]string{"a", "b"}, []string{"c", "b"}, `tag "b" is both wanted and excluded`},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.tags, tt.not), func(t *testing.T) {
			f, err := NewTagFilter(tt.tags, tt.not)
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("NewTagFilter = %v", err)
			case tt.err != "" && (!errors.Is(err, ErrBadTagFilter) || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("NewTagFilter = %v, want ErrBadTagFilter saying %q", err, tt.err)
			case tt.err == "" && len(f.Tags) != len(slices.Compact(slices.Sorted(slices.Values(tt.tags)))):
				t.Errorf("Tags = %q: duplicates kept", f.Tags)
			}
		})
	}
}

func TestTagFilterMatch(t *testing.T) {
	tests := []struct {
		tags, not []string
		has       []string
		want      bool
	}{
		{nil, nil, nil, true},
		{[]string{"docs"}, nil, []string{"docs"}, true},
		{[]string{"docs"}, nil, []string{"frontend", "docs"}, true},
		{[]string{"docs"}, nil, nil, false},
		{[]string{"docs"}, nil, []string{"Docs"}, false},
		{[]string{"docs", "frontend"}, nil, []string{"docs"}, false},
		{[]string{"docs", "frontend"}, nil, []string{"frontend", "x", "docs"}, true},
		{nil, []string{"wip"}, nil, true},
		{nil, []string{"wip"}, []string{"docs", "wip"}, false},
		{[]string{"docs"}, []string{"wip", "old"}, []string{"docs", "old"}, false},
		{[]string{"docs"}, []string{"wip", "old"}, []string{"docs"}, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.tags, tt.not, tt.has), func(t *testing.T) {
			f := TagFilter{Tags: tt.tags, NotTags: tt.not}
			s := Session{ID: "x", Meta: Meta{Tags: tt.has}}
			if got := f.Match(s); got != tt.want {
				t.Errorf("Match = %v, want %v", got, tt.want)
			}
			line := "x.md\t1\t2\t3\t1\t0.0\t0\ttitle\t" + joinList(tt.has) + "\t\t"
			if got := f.lineMatcher().match([]byte(line)); got != tt.want {
				t.Errorf("match of the cache line = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTagFilterString(t *testing.T) {
	f := TagFilter{Tags: []string{"docs", "needs review"}, NotTags: []string{"it's"}}
	if got, want := f.String(), `--tag docs --tag 'needs review' --not-tag 'it'\''s'`; got != want {
		t.Errorf("String = %s, want %s", got, want)
	}
}

// TestPeekMatchingAgreesWithMatch: reading only the tags field of the
// listing cache picks the same sessions, in the same order, as Match on
// the full listing, tags with escaped characters included.
func TestPeekMatchingAgreesWithMatch(t *testing.T) {
	b := cacheTestBoard(t)
	tags := [][]string{{"docs"}, {"docs", "frontend"}, {"frontend"}, nil, {`back\slash`, "docs"}, {"needs review"}, {"tab\there"}, {"docs", "wip"}}
	prios := []string{"low", "high", "medium"}
	for i := range 24 {
		var quoted []string
		for _, t := range tags[i%len(tags)] {
			quoted = append(quoted, fmt.Sprintf("%q", t))
		}
		cachePut(t, b, fmt.Sprintf("todo/s%02d.md", i), fmt.Sprintf("---\npriority: %s\ncreated_at: 2026-01-01T00:00:%02dZ\ntags: [%s]\n---\n",
			prios[i%len(prios)], i, strings.Join(quoted, ", ")))
	}
	all, err := b.ListState(Todo, true) // also writes the cache
	if err != nil {
		t.Fatal(err)
	}
	filters := []TagFilter{
		{},
		{Tags: []string{"docs"}},
		{Tags: []string{"docs", "frontend"}},
		{Tags: []string{"docs"}, NotTags: []string{"wip"}},
		{NotTags: []string{"docs"}},
		{Tags: []string{`back\slash`}},
		{Tags: []string{"tab\there"}},
		{Tags: []string{"needs review"}},
		{Tags: []string{"nope"}},
	}
	for _, f := range filters {
		want := f.Keep(slices.Clone(all))
		if len(want) == 0 && f.Tags != nil && f.Tags[0] != "nope" {
			t.Fatalf("%s matches nothing: the board is not what the test means", f)
		}
		for _, n := range []int{0, 1, 3, 30} {
			first, more, excluded, ok := b.PeekMatching(Todo, n, f)
			if !ok {
				t.Fatalf("PeekMatching(%d, %s): the cache cannot answer", n, f)
			}
			head := want[:min(n, len(want))]
			if peekIDs(first) != peekIDs(head) || more != len(want)-len(head) || excluded != len(all)-len(want) {
				t.Errorf("PeekMatching(%d, %s) = %s, %d more, %d excluded; want %s, %d, %d",
					n, f, peekIDs(first), more, excluded, peekIDs(head), len(want)-len(head), len(all)-len(want))
			}
		}
		lineup, ok := b.Lineup(Todo)
		if !ok {
			t.Fatal("Lineup: the cache cannot answer")
		}
		match := lineup.Matching(f)
		var got []Session
		for i := range lineup.Len() {
			if match(i) {
				s, _ := lineup.Session(i)
				got = append(got, s)
			}
		}
		if peekIDs(got) != peekIDs(want) {
			t.Errorf("Lineup.Matching(%s) = %s, want %s", f, peekIDs(got), peekIDs(want))
		}
	}
}
