package claim_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

func TestClaimConflict(t *testing.T) {
	tests := []struct {
		name     string
		op       string
		src, dst [2]string // state, owner
	}{
		{"claim onto an existing copy", "claim", [2]string{"todo", ""}, [2]string{"doing", "alice"}},
		{"release onto an existing copy", "release", [2]string{"doing", "alice"}, [2]string{"todo", ""}},
		{"done onto an existing copy", "done", [2]string{"doing", "alice"}, [2]string{"done", ""}},
		{"reopen onto an existing copy", "reopen", [2]string{"done", ""}, [2]string{"todo", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pkBoard(t)
			src := pkPut(t, b, sessions.State(tt.src[0]), tt.src[1], "x", sessions.Meta{Title: "mine", Priority: sessions.High})
			dst := pkPut(t, b, sessions.State(tt.dst[0]), tt.dst[1], "x", sessions.Meta{Title: "merged in"})
			before := pkTree(t, b.Dir)
			_, err := pkOp(pkClient(t, b, "alice"), tt.op)("x")
			if !errors.Is(err, claim.ErrConflict) {
				t.Fatalf("%s = %v, want ErrConflict", tt.op, err)
			}
			var ce *claim.Error
			if !errors.As(err, &ce) || ce.Op != tt.op || ce.ID != "x" ||
				ce.From != b.Path(sessions.State(tt.src[0]), tt.src[1], "x") || ce.To != b.Path(sessions.State(tt.dst[0]), tt.dst[1], "x") {
				t.Errorf("error %#v: want Op %s, ID x, From the source and To the destination", err, tt.op)
			}
			for _, c := range []struct {
				where [2]string
				want  []byte
			}{{tt.src, src}, {tt.dst, dst}} {
				got, err := os.ReadFile(b.Path(sessions.State(c.where[0]), c.where[1], "x"))
				if err != nil || !bytes.Equal(got, c.want) {
					t.Errorf("copy in %v changed (err %v)", c.where, err)
				}
			}
			if d := pkDiffTree(before, pkTree(t, b.Dir)); len(d) > 0 {
				t.Errorf("%s changed the board: %v", tt.op, d)
			}
		})
	}
}

func TestClaimCreatesOwnerDir(t *testing.T) {
	tests := []struct {
		name string
		do   func(c *claim.Client) error
	}{
		{"claim", func(c *claim.Client) error { _, err := c.Claim(context.Background(), "x"); return err }},
		{"next", func(c *claim.Client) error { _, err := c.Next(context.Background()); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pkBoard(t)
			pkPut(t, b, sessions.Todo, "", "x", sessions.Meta{})
			dir := b.StateDir(sessions.Doing, "carol")
			if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("doing/carol exists before the claim: %v", err)
			}
			if err := tt.do(pkClient(t, b, "carol")); err != nil {
				t.Fatal(err)
			}
			if info, err := os.Lstat(dir); err != nil || !info.IsDir() {
				t.Fatalf("doing/carol after the claim: %v", err)
			}
			if got := pkWhere(t, b, "x"); got != "doing/carol" {
				t.Errorf("x is in %s, want doing/carol", got)
			}
		})
	}
}

// TestClaimSymlinkIsNotASession: Locate and List say a symlink in a state
// directory is not a session, so claiming it by id must not move it either.
func TestClaimSymlinkIsNotASession(t *testing.T) {
	b := pkBoard(t)
	target := filepath.Join(t.TempDir(), "target.md")
	content := pkContent("target", sessions.Meta{})
	if err := os.WriteFile(target, content, 0o644); err != nil {
		t.Fatal(err)
	}
	link := b.Path(sessions.Todo, "", "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	_, err := pkClient(t, b, "alice").Claim(context.Background(), "link")
	if !errors.Is(err, claim.ErrSessionNotFound) {
		t.Errorf("Claim of a symlink = %v, want ErrSessionNotFound (symlinks are not sessions)", err)
	}
	if info, lerr := os.Lstat(link); lerr != nil || info.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the symlink left todo/: %v", lerr)
	}
	if got, _ := os.ReadFile(target); !bytes.Equal(got, content) {
		t.Errorf("symlink target changed")
	}
}
