package claim_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// exampleBoard creates a board in a temporary directory whose clock is
// fixed, so that session ids are predictable. Call the returned function to
// remove it.
func exampleBoard() (*sessions.Board, func()) {
	dir, err := os.MkdirTemp("", "pickup-example-")
	if err != nil {
		log.Fatal(err)
	}
	b, err := sessions.Init(dir)
	if err != nil {
		log.Fatal(err)
	}
	b.Now = func() time.Time { return time.Date(2026, 11, 22, 9, 15, 3, 0, time.UTC) }
	return b, func() { os.RemoveAll(dir) }
}

func ExampleClient_Claim() {
	b, cleanup := exampleBoard()
	defer cleanup()

	s, err := b.Create(sessions.Meta{
		Title:     "Fix the parser",
		Priority:  sessions.High,
		CreatedAt: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC),
	}, []byte("The parser chokes on tabs.\n"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("created", s.ID, "in", s.State)

	alice, err := claim.New(b, "alice")
	if err != nil {
		log.Fatal(err)
	}
	got, err := alice.Claim(context.Background(), s.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("claimed", got.ID, "state:", got.State, "owner:", got.Owner)
	fmt.Println("title:", got.Title, "priority:", got.Priority, "created:", got.CreatedAt.Format(time.RFC3339))

	done, err := alice.Done(context.Background(), s.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("finished", done.ID, "state:", done.State)
	// Output:
	// created 2026-11-22_09-15-03 in todo
	// claimed 2026-11-22_09-15-03 state: doing owner: alice
	// title: Fix the parser priority: high created: 2026-11-22T09:00:00Z
	// finished 2026-11-22_09-15-03 state: done
}

func ExampleClient_Next() {
	b, cleanup := exampleBoard()
	defer cleanup()

	at := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	for _, m := range []sessions.Meta{
		{Title: "Write the docs", Priority: sessions.Low, CreatedAt: at},
		{Title: "Review the PR", Priority: sessions.Medium, CreatedAt: at.Add(time.Hour)},
		{Title: "Fix production", Priority: sessions.High, CreatedAt: at.Add(2 * time.Hour)},
		{Title: "Triage bugs", Priority: sessions.Medium, CreatedAt: at},
	} {
		if _, err := b.Create(m, nil); err != nil {
			log.Fatal(err)
		}
	}

	// Next takes the highest priority first, then the oldest.
	worker, err := claim.New(b, "worker-1")
	if err != nil {
		log.Fatal(err)
	}
	for {
		s, err := worker.Next(context.Background())
		if errors.Is(err, claim.ErrNothingAvailable) {
			fmt.Println("nothing left")
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-6s %s\n", s.Priority, s.Title)
	}
	// Output:
	// high   Fix production
	// medium Triage bugs
	// medium Review the PR
	// low    Write the docs
	// nothing left
}

// Two owners race for one session: exactly one wins, and the other is told
// who has it with ErrSessionNotAvailable, a normal outcome that means "take
// other work", not a failure.
func ExampleClient_Claim_lostRace() {
	b, cleanup := exampleBoard()
	defer cleanup()

	s, err := b.Create(sessions.Meta{Title: "Upgrade the database"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	alice, _ := claim.New(b, "alice")
	bob, _ := claim.New(b, "bob")

	if _, err := alice.Claim(context.Background(), s.ID); err != nil {
		log.Fatal(err)
	}
	_, err = bob.Claim(context.Background(), s.ID)
	switch {
	case errors.Is(err, claim.ErrSessionNotAvailable):
		var ce *claim.Error
		if errors.As(err, &ce) {
			fmt.Printf("bob lost: %s is held by %s\n", ce.ID, ce.Holder)
		}
		fmt.Println(err)
	case err != nil:
		log.Fatal(err) // a real failure
	default:
		fmt.Println("bob won")
	}
	// Output:
	// bob lost: 2026-11-22_09-15-03 is held by alice
	// claim 2026-11-22_09-15-03: session not available (claimed by alice)
}

// ExampleClient_Locks takes a named lock on the client's board: on a
// PostgreSQL board the database holds it too, so the key is held once
// across every machine; here, a board that is not shared, this
// machine's processes exclude each other.
func ExampleClient_Locks() {
	b, cleanup := exampleBoard()
	defer cleanup()
	c, err := claim.New(b, "agent-7")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	locks := c.Locks()
	defer locks.Close()
	unlock, err := locks.Acquire(context.Background(), "repo:main")
	if err != nil {
		log.Fatal(err)
	}
	_, held, _ := locks.Check("repo:main")
	fmt.Println("held:", held)
	if err := unlock(); err != nil {
		log.Fatal(err)
	}
	_, held, _ = locks.Check("repo:main")
	fmt.Println("held after unlock:", held)
	// Output:
	// held: true
	// held after unlock: false
}
