package sessions_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/pickup-dev/pickup/sessions"
)

func ExampleBoard_Create() {
	dir, err := os.MkdirTemp("", "pickup-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	b, err := sessions.Init(filepath.Join(dir, "board"))
	if err != nil {
		log.Fatal(err)
	}
	// A fixed clock, so that the ids are known: both sessions are created
	// in the same second, so the second one gets the suffix -2.
	b.Now = func() time.Time { return time.Date(2026, 11, 22, 9, 15, 3, 0, time.UTC) }

	for _, title := range []string{"Fix the parser", "Write the docs"} {
		s, err := b.Create(sessions.Meta{Priority: sessions.High, Title: title}, []byte("# "+title+"\n"))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(s.ID, s.State, s.Priority, s.Title)
	}
	// Output:
	// 2026-11-22_09-15-03 todo high Fix the parser
	// 2026-11-22_09-15-03-2 todo high Write the docs
}

func ExampleBoard_List() {
	dir, err := os.MkdirTemp("", "pickup-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	b, err := sessions.Init(filepath.Join(dir, "board"))
	if err != nil {
		log.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	b.Now = func() time.Time { return now }

	for _, s := range []struct {
		prio  sessions.Priority
		title string
	}{
		{sessions.Low, "Tidy the README"},
		{sessions.High, "Fix the crash"},
		{sessions.Medium, "Add a flag"},
		{sessions.High, "Fix the leak"},
	} {
		if _, err := b.Create(sessions.Meta{Priority: s.prio, Title: s.title}, nil); err != nil {
			log.Fatal(err)
		}
		now = now.Add(time.Minute)
	}

	// Board order: priority high to low, then oldest first.
	list, err := b.List(sessions.Todo)
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range list {
		fmt.Printf("%s %-6s %s\n", s.ID, s.Priority, s.Title)
	}
	// Output:
	// 2026-11-22_09-01-00 high   Fix the crash
	// 2026-11-22_09-03-00 high   Fix the leak
	// 2026-11-22_09-02-00 medium Add a flag
	// 2026-11-22_09-00-00 low    Tidy the README
}
