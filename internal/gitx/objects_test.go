package gitx

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

// TestWriteObjectsAsGitDoes: the blobs, trees and names written in
// process are the ones git writes for the same content, and git reads
// them back (fsck finds nothing wrong).
func TestWriteObjectsAsGitDoes(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	ctx := context.Background()
	r, err := Find(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !r.ObjectsInProcess() {
		t.Fatal("a new repository's objects cannot be written in process")
	}
	git := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	a, err := r.WriteObject("blob", []byte("a\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := git("a\n", "hash-object", "--stdin"); a != want {
		t.Fatalf("blob name %s, git says %s", a, want)
	}
	b, _ := r.WriteObject("blob", []byte("b\n"))
	// "x" sorts before "x.md" as a file but after it as a directory.
	files := map[string]TreeFile{"x.md": {"100644", a}, "x/y.md": {"100644", b}, "doing/o/1.md": {"100644", a}, "todo/2.md": {"100644", b}}
	tree, err := r.WriteTree(files)
	if err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	for p, f := range files {
		in.WriteString(f.Mode + " " + f.Sha + "\t" + p + "\n")
	}
	cmd := exec.Command("git", "update-index", "--add", "--index-info")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(in.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("update-index: %v\n%s", err, out)
	}
	if want := git("", "write-tree"); tree != want {
		t.Fatalf("tree %s, git writes %s", tree, want)
	}
	if got := git("", "cat-file", "-p", tree+":x/y.md"); got != "b" {
		t.Fatalf("x/y.md read back as %q", got)
	}
	git("", "fsck", "--strict", "--no-dangling")
}
