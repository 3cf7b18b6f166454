package claim_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

func TestClaimNextOrder(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 3, d, 12, 0, 0, 0, time.UTC) }
	b := pkBoard(t)
	for _, s := range []struct {
		id string
		m  sessions.Meta
	}{
		{"m-old", sessions.Meta{Priority: sessions.Medium, CreatedAt: day(1)}},
		{"l-oldest", sessions.Meta{Priority: sessions.Low, CreatedAt: day(1).AddDate(-1, 0, 0)}},
		{"h-new", sessions.Meta{Priority: sessions.High, CreatedAt: day(20)}},
		{"h-old-b", sessions.Meta{Priority: sessions.High, CreatedAt: day(2)}},
		{"h-old-a", sessions.Meta{Priority: sessions.High, CreatedAt: day(2)}},
		{"m-new", sessions.Meta{Priority: sessions.Medium, CreatedAt: day(9)}},
		{"a-low", sessions.Meta{Priority: sessions.Low, CreatedAt: day(5)}},
	} {
		pkPut(t, b, sessions.Todo, "", s.id, s.m)
	}
	// Broken frontmatter: listed and claimable with default metadata
	// (medium, created_at from the file's modification time).
	broken := b.Path(sessions.Todo, "", "m-broken")
	if err := os.WriteFile(broken, []byte("---\npriority: [high\n---\nbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(broken, day(5), day(5)); err != nil {
		t.Fatal(err)
	}
	want := []string{"h-old-a", "h-old-b", "h-new", "m-old", "m-broken", "m-new", "l-oldest", "a-low"}
	c := pkClient(t, b, "alice")
	var got []string
	for range want {
		s, err := c.Next(context.Background())
		if err != nil {
			t.Fatalf("Next after %v: %v", got, err)
		}
		if s.State != sessions.Doing || s.Owner != "alice" || s.Path != b.Path(sessions.Doing, "alice", s.ID) {
			t.Errorf("Next returned %s in %s/%s at %s", s.ID, s.State, s.Owner, s.Path)
		}
		if s.ID == "m-broken" && s.Problem == "" {
			t.Errorf("Next returned the broken session without a Problem")
		}
		got = append(got, s.ID)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Next order\n got %v\nwant %v", got, want)
	}
	_, err := c.Next(context.Background())
	var ce *claim.Error
	if !errors.Is(err, claim.ErrNothingAvailable) || !errors.As(err, &ce) || ce.Op != "next" {
		t.Errorf("Next on an empty todo = %v, want a next *claim.Error wrapping ErrNothingAvailable", err)
	}
}

func TestClaimNextDependencies(t *testing.T) {
	b := pkBoard(t)
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	pkPut(t, b, sessions.Todo, "", "build", sessions.Meta{CreatedAt: at})
	pkPut(t, b, sessions.Todo, "", "deploy", sessions.Meta{CreatedAt: at.Add(-time.Hour), Priority: sessions.High, DependsOn: []string{"build", "review"}})
	pkPut(t, b, sessions.Done, "", "review", sessions.Meta{})
	pkPut(t, b, sessions.Todo, "", "ghost-dep", sessions.Meta{Priority: sessions.High, DependsOn: []string{"never-created"}})
	pkPut(t, b, sessions.Todo, "", "docs", sessions.Meta{CreatedAt: at.Add(time.Hour), DependsOn: []string{"review"}})
	c := pkClient(t, b, "alice")
	ctx := context.Background()

	steps := []struct {
		name    string
		done    string // finish this session first
		want    string // id Next claims; "" for ErrNothingAvailable
		blocked string // in the ErrNothingAvailable message
	}{
		{name: "ready sessions in order", want: "build"},
		{name: "dependency done", want: "docs"},
		{name: "only blocked left", blocked: "2 session(s)"},
		{name: "blocker finished", done: "build", want: "deploy"},
		{name: "missing dependency never ready", blocked: "1 session(s)"},
	}
	for _, st := range steps {
		if st.done != "" {
			if _, err := c.Done(context.Background(), st.done); err != nil {
				t.Fatalf("%s: done %s: %v", st.name, st.done, err)
			}
		}
		s, err := c.Next(ctx)
		switch {
		case st.want != "" && (err != nil || s.ID != st.want):
			t.Errorf("%s: Next = %q, %v; want %s", st.name, s.ID, err, st.want)
		case st.want == "" && !errors.Is(err, claim.ErrNothingAvailable):
			t.Errorf("%s: Next = %q, %v; want ErrNothingAvailable", st.name, s.ID, err)
		case st.want == "" && !strings.Contains(err.Error(), st.blocked):
			t.Errorf("%s: message %q does not say %q", st.name, err, st.blocked)
		}
	}
	if got := pkWhere(t, b, "ghost-dep"); got != "todo" {
		t.Errorf("ghost-dep moved to %s", got)
	}
}

func TestClaimNextEmptyBoard(t *testing.T) {
	b := pkBoard(t)
	_, err := pkClient(t, b, "alice").Next(context.Background())
	if !errors.Is(err, claim.ErrNothingAvailable) {
		t.Fatalf("Next on an empty board = %v, want ErrNothingAvailable", err)
	}
	if strings.Contains(err.Error(), "dependencies") {
		t.Errorf("message %q talks about dependencies on an empty board", err)
	}
}
