package postgres

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/pickup-dev/pickup/internal/gitx"
)

// TestOnBranch: the pusher's test of whether the board branch still has
// the tip the last push left there, on a real repository: the tip itself
// and its ancestors are on it; a commit the branch dropped (rewound past
// it, or one of another history), a deleted branch, a commit this clone
// does not have and a tip that is no object name are not.
func TestOnBranch(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir,
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	commit := func(msg string) string {
		git("commit", "-q", "--allow-empty", "-m", msg)
		return git("rev-parse", "HEAD")
	}
	a := commit("a")
	b := commit("b")
	c := commit("c")
	git("checkout", "-q", "--orphan", "other")
	other := commit("other")
	repo, err := gitx.Find(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	h := History{Repo: repo}
	for _, tc := range []struct {
		name        string
		tip, commit string
		want        bool
	}{
		{"nothing pushed yet", c, "", true},
		{"the tip itself", c, c, true},
		{"an ancestor (someone pushed on top)", c, a, true},
		{"force-pushed back past it", a, c, false},
		{"force-pushed back by one", b, c, false},
		{"replaced by another history", other, c, false},
		{"the branch deleted", "", c, false},
		{"a commit this clone does not have", c, strings.Repeat("ab", 20), false},
		{"not an object name", c, "--output=/tmp/x", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := h.onBranch(context.Background(), tc.tip, tc.commit)
			if err != nil || got != tc.want {
				t.Errorf("onBranch(%.7s, %.7s) = %v, %v; want %v", tc.tip, tc.commit, got, err, tc.want)
			}
		})
	}
}
