package sessions

import (
	"strings"
	"testing"
)

func TestValidBoardBranch(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"pickup", true},
		{"boards/team-a", true},
		{"pickup.v2", true},
		{"HEAD", false},
		{"a..b", false},
		{"main..pickup", false},
		{"@", false},
		{"x@{1}", false},
		{"-f", false},
		{"refs/heads/pickup", false},
		{"a/", false},
		{"a.", false},
		{".hidden", false},
		{"a/.b", false},
		{"x.lock", false},
		{"a//b", false},
		{"a b", false},
		{"a~1", false},
		{"a^", false},
		{"a:b", false},
		{"a?", false},
		{"a*", false},
		{"a[b", false},
		{"a\\b", false},
		{"a\x01b", false},
		{"", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := ValidBoardBranch(tc.name); (err == nil) != tc.ok {
				t.Fatalf("ValidBoardBranch(%q) = %v, want ok %v", tc.name, err, tc.ok)
			}
		})
	}
}

// TestSharedBranchChecked: config.yaml's shared_branch is checked when the
// file is read, with its line.
func TestSharedBranchChecked(t *testing.T) {
	for _, v := range []string{"HEAD", "a..b", "x.lock"} {
		_, err := ParseConfig("/b/config.yaml", []byte("shared: origin\nshared_branch: "+v+"\n"))
		if err == nil || !strings.Contains(err.Error(), "/b/config.yaml:2: shared_branch:") {
			t.Fatalf("shared_branch: %s: %v, want an error at /b/config.yaml:2", v, err)
		}
	}
	if c, err := ParseConfig("c", []byte("shared: origin\nshared_branch: boards/a\n")); err != nil || c.SharedBranch != "boards/a" {
		t.Fatalf("a good branch: %+v %v", c, err)
	}
}
