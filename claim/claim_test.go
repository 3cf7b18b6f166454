package claim_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// pkBoard makes a fresh board in a temporary directory.
func pkBoard(t *testing.T) *sessions.Board {
	t.Helper()
	b, err := sessions.Init(filepath.Join(t.TempDir(), "board"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pkContent is the file a test writes for session id.
func pkContent(id string, m sessions.Meta) []byte {
	if m.CreatedAt.IsZero() {
		m.CreatedAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	}
	if m.Title == "" {
		m.Title = "session " + id
	}
	return sessions.Render(m, []byte("# "+id+"\n\nbody of "+id+"\n"))
}

// pkPut writes session id with metadata m at the given place (owner only for
// doing) and returns its content.
func pkPut(t *testing.T, b *sessions.Board, st sessions.State, owner, id string, m sessions.Meta) []byte {
	t.Helper()
	data := pkContent(id, m)
	pkPutRaw(t, b, st, owner, id, data)
	return data
}

func pkPutRaw(t *testing.T, b *sessions.Board, st sessions.State, owner, id string, data []byte) {
	t.Helper()
	p := b.Path(st, owner, id)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// pkWalk returns, for every session file on the board, the places it is
// in: "todo", "doing/<owner>" or "done". Dotfiles are skipped; anything
// else that is not a regular "<id>.md" file is reported under "stray:".
func pkWalk(b *sessions.Board) (map[string][]string, error) {
	out := map[string][]string{}
	add := func(dir, place string) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") {
				continue
			}
			id, ok := strings.CutSuffix(name, ".md")
			if !ok || !e.Type().IsRegular() {
				out["stray:"+place+"/"+name] = append(out["stray:"+place+"/"+name], place)
				continue
			}
			out[id] = append(out[id], place)
		}
		return nil
	}
	if err := add(b.StateDir(sessions.Todo, ""), "todo"); err != nil {
		return nil, err
	}
	if err := add(b.StateDir(sessions.Done, ""), "done"); err != nil {
		return nil, err
	}
	owners, err := os.ReadDir(b.StateDir(sessions.Doing, ""))
	if err != nil {
		return nil, err
	}
	for _, o := range owners {
		if !o.IsDir() {
			out["stray:doing/"+o.Name()] = append(out["stray:doing/"+o.Name()], "doing")
			continue
		}
		if err := add(b.StateDir(sessions.Doing, o.Name()), "doing/"+o.Name()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pkWhere returns the single place of id, failing if it is not exactly one.
func pkWhere(t *testing.T, b *sessions.Board, id string) string {
	t.Helper()
	w, err := pkWalk(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(w[id]) != 1 {
		t.Fatalf("session %s is in %d places %v, want exactly one", id, len(w[id]), w[id])
	}
	return w[id][0]
}

// pkTree snapshots every path under root with its mode and content.
func pkTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == "moves.lock" && filepath.Base(filepath.Dir(p)) == sessions.RuntimeDirName {
			return nil // the move guard, made by the first move: a lock, not board state
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		v := info.Mode().String()
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(data)
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func pkDiffTree(before, after map[string]string) []string {
	var diffs []string
	for p, v := range before {
		if w, ok := after[p]; !ok {
			diffs = append(diffs, "removed "+p)
		} else if w != v {
			diffs = append(diffs, "changed "+p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			diffs = append(diffs, "added "+p)
		}
	}
	sort.Strings(diffs)
	return diffs
}

func pkClient(t *testing.T, b *sessions.Board, owner string) *claim.Client {
	t.Helper()
	c, err := claim.New(b, owner)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func pkOp(c *claim.Client, op string) func(string) (sessions.Session, error) {
	ops := map[string]func(context.Context, string) (sessions.Session, error){
		"claim": c.Claim, "release": c.Release, "done": c.Done, "reopen": c.Reopen,
	}
	do, ok := ops[op]
	if !ok {
		panic("unknown op " + op)
	}
	return func(id string) (sessions.Session, error) { return do(context.Background(), id) }
}

func TestClaimTransitions(t *testing.T) {
	type placed struct {
		st    sessions.State
		owner string
	}
	tests := []struct {
		name  string
		at    *placed // where session "s1" starts; nil: nowhere
		op    string
		want  string // place of s1 afterwards ("" if it does not exist)
		err   error  // sentinel, nil for success
		state sessions.State
		hold  string // *claim.Error Holder
	}{
		{name: "claim from todo", at: &placed{sessions.Todo, ""}, op: "claim", want: "doing/alice"},
		{name: "claim again by the same owner", at: &placed{sessions.Doing, "alice"}, op: "claim", want: "doing/alice"},
		{name: "claim held by another owner", at: &placed{sessions.Doing, "bob"}, op: "claim", want: "doing/bob",
			err: claim.ErrSessionNotAvailable, state: sessions.Doing, hold: "bob"},
		{name: "claim a done session", at: &placed{sessions.Done, ""}, op: "claim", want: "done",
			err: claim.ErrSessionNotAvailable, state: sessions.Done},
		{name: "claim a missing session", op: "claim", err: claim.ErrSessionNotFound},
		{name: "release own", at: &placed{sessions.Doing, "alice"}, op: "release", want: "todo"},
		{name: "release another owner's", at: &placed{sessions.Doing, "bob"}, op: "release", want: "doing/bob",
			err: claim.ErrSessionNotAvailable, state: sessions.Doing, hold: "bob"},
		{name: "release an unclaimed session", at: &placed{sessions.Todo, ""}, op: "release", want: "todo",
			err: claim.ErrSessionNotAvailable, state: sessions.Todo},
		{name: "release a missing session", op: "release", err: claim.ErrSessionNotFound},
		{name: "done own", at: &placed{sessions.Doing, "alice"}, op: "done", want: "done"},
		{name: "done another owner's", at: &placed{sessions.Doing, "bob"}, op: "done", want: "doing/bob",
			err: claim.ErrSessionNotAvailable, state: sessions.Doing, hold: "bob"},
		{name: "done twice", at: &placed{sessions.Done, ""}, op: "done", want: "done",
			err: claim.ErrSessionNotAvailable, state: sessions.Done},
		{name: "done an unclaimed session", at: &placed{sessions.Todo, ""}, op: "done", want: "todo",
			err: claim.ErrSessionNotAvailable, state: sessions.Todo},
		{name: "reopen done", at: &placed{sessions.Done, ""}, op: "reopen", want: "todo"},
		{name: "reopen a session in todo", at: &placed{sessions.Todo, ""}, op: "reopen", want: "todo"},
		{name: "reopen a claimed session", at: &placed{sessions.Doing, "bob"}, op: "reopen", want: "doing/bob",
			err: claim.ErrSessionNotAvailable, state: sessions.Doing, hold: "bob"},
		{name: "reopen a missing session", op: "reopen", err: claim.ErrSessionNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pkBoard(t)
			var content []byte
			if tt.at != nil {
				content = pkPut(t, b, tt.at.st, tt.at.owner, "s1", sessions.Meta{Title: "first"})
			}
			pkPut(t, b, sessions.Todo, "", "other", sessions.Meta{}) // a bystander
			c := pkClient(t, b, "alice")
			s, err := pkOp(c, tt.op)("s1")
			if tt.err == nil {
				if err != nil {
					t.Fatalf("%s: %v, want success", tt.op, err)
				}
				wantState, wantOwner, _ := strings.Cut(tt.want, "/")
				if string(s.State) != wantState || s.Owner != wantOwner || s.ID != "s1" || s.Title != "first" {
					t.Errorf("%s returned id %q state %q owner %q title %q, want s1 %s %q first", tt.op, s.ID, s.State, s.Owner, s.Title, wantState, wantOwner)
				}
				if want := b.Path(sessions.State(wantState), wantOwner, "s1"); s.Path != want {
					t.Errorf("%s returned path %s, want %s", tt.op, s.Path, want)
				}
			} else {
				if !errors.Is(err, tt.err) {
					t.Fatalf("%s: err = %v, want %v", tt.op, err, tt.err)
				}
				var ce *claim.Error
				if !errors.As(err, &ce) {
					t.Fatalf("%s: err %T is not a *claim.Error", tt.op, err)
				}
				if ce.Op != tt.op || ce.ID != "s1" || ce.State != tt.state || ce.Holder != tt.hold {
					t.Errorf("%s: error fields Op %q ID %q State %q Holder %q, want %q s1 %q %q", tt.op, ce.Op, ce.ID, ce.State, ce.Holder, tt.op, tt.state, tt.hold)
				}
				if tt.hold != "" && !strings.Contains(err.Error(), tt.hold) {
					t.Errorf("message %q does not name the holder %s", err, tt.hold)
				}
			}
			w, werr := pkWalk(b)
			if werr != nil {
				t.Fatal(werr)
			}
			if tt.want == "" {
				if len(w["s1"]) != 0 {
					t.Errorf("s1 appeared at %v", w["s1"])
				}
			} else {
				if len(w["s1"]) != 1 || w["s1"][0] != tt.want {
					t.Fatalf("s1 is at %v, want [%s]", w["s1"], tt.want)
				}
				st, owner, _ := strings.Cut(tt.want, "/")
				got, rerr := os.ReadFile(b.Path(sessions.State(st), owner, "s1"))
				if rerr != nil || !bytes.Equal(got, content) {
					t.Errorf("content changed by %s (err %v)", tt.op, rerr)
				}
			}
			if len(w["other"]) != 1 || w["other"][0] != "todo" || len(w) != 1+len(w["s1"]) {
				t.Errorf("board after %s: %v", tt.op, w)
			}
		})
	}
}

func TestClaimInvalidID(t *testing.T) {
	ids := []struct {
		name string
		id   string
	}{
		{"slash", "a/b"},
		{"dot-dot", ".."},
		{"escape", "../outside"},
		{"deep escape", "../../../../etc/passwd"},
		{"absolute", "/etc/passwd"},
		{"NUL", "a\x00b"},
		{"300 chars", strings.Repeat("a", 300)},
		{"empty", ""},
		{"leading dot", ".hidden"},
		{"leading dash", "-rf"},
		{"space", "a b"},
		{"newline", "a\nb"},
	}
	for _, op := range []string{"claim", "release", "done", "reopen"} {
		for _, tt := range ids {
			t.Run(op+"/"+tt.name, func(t *testing.T) {
				root := t.TempDir()
				b, err := sessions.Init(filepath.Join(root, "board"))
				if err != nil {
					t.Fatal(err)
				}
				// Files an escaping id could reach.
				for _, p := range []string{filepath.Join(root, "outside.md"), filepath.Join(root, "board", "x.md")} {
					if err := os.WriteFile(p, []byte("---\ntitle: bait\n---\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				pkPut(t, b, sessions.Todo, "", "a", sessions.Meta{})
				pkPut(t, b, sessions.Done, "", "d", sessions.Meta{})
				before := pkTree(t, root)
				c := pkClient(t, b, "alice")
				_, err = pkOp(c, op)(tt.id)
				if !errors.Is(err, claim.ErrInvalidID) {
					t.Fatalf("%s(%q) = %v, want ErrInvalidID", op, tt.id, err)
				}
				var ce *claim.Error
				if !errors.As(err, &ce) || ce.Op != op || ce.ID != tt.id {
					t.Errorf("%s(%q): error %#v, want a *claim.Error with Op and ID", op, tt.id, err)
				}
				if d := pkDiffTree(before, pkTree(t, root)); len(d) > 0 {
					t.Errorf("%s(%q) touched the disk: %v", op, tt.id, d)
				}
			})
		}
	}
	for _, tt := range ids {
		t.Run("owner/"+tt.name, func(t *testing.T) {
			b := pkBoard(t)
			before := pkTree(t, b.Dir)
			if _, err := claim.New(b, tt.id); !errors.Is(err, claim.ErrInvalidID) {
				t.Errorf("New(owner %q) = %v, want ErrInvalidID", tt.id, err)
			}
			if d := pkDiffTree(before, pkTree(t, b.Dir)); len(d) > 0 {
				t.Errorf("New(owner %q) touched the disk: %v", tt.id, d)
			}
		})
	}
}

// TestTransitionContextDone: a transition whose context is done already
// returns the context's error and moves nothing, on any board (on a
// shared one, before it asks the arbiter anything).
func TestTransitionContextDone(t *testing.T) {
	b := pkBoard(t)
	pkPut(t, b, sessions.Todo, "", "t", sessions.Meta{})
	pkPut(t, b, sessions.Doing, "alice", "h", sessions.Meta{})
	pkPut(t, b, sessions.Done, "", "d", sessions.Meta{})
	pkPut(t, b, sessions.Failed, "", "f", sessions.Meta{})
	c := pkClient(t, b, "alice")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	before := pkPlaces(t, b)
	for name, do := range map[string]func() error{
		"claim":     func() error { _, err := c.Claim(ctx, "t"); return err },
		"release":   func() error { _, err := c.Release(ctx, "h"); return err },
		"done":      func() error { _, err := c.Done(ctx, "h"); return err },
		"reopen":    func() error { _, err := c.Reopen(ctx, "d"); return err },
		"hand over": func() error { _, err := c.HandOver(ctx, "h", "bob"); return err },
		"priority":  func() error { _, err := c.SetPriority(ctx, "t", 1); return err },
		"requeue":   func() error { _, err := c.Requeue(ctx, "f"); return err },
		"next":      func() error { _, err := c.Next(ctx); return err },
	} {
		if err := do(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context = %v, want context.Canceled", name, err)
		}
	}
	if after := pkPlaces(t, b); !maps.Equal(before, after) {
		t.Errorf("a cancelled context moved sessions: %v, then %v", before, after)
	}
}
