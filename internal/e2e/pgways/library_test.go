package pgways

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// libraryEnv gives this test process the children's environment (env):
// the library starts the PostgreSQL helper here, as a Go program would.
func libraryEnv(t *testing.T, home string) {
	for _, kv := range env(home) {
		k, v, _ := strings.Cut(kv, "=")
		if os.Getenv(k) != v {
			t.Setenv(k, v)
		}
	}
}

// libClient opens dir with the public packages only.
func libClient(dir, owner string) (*claim.Client, error) {
	b, err := sessions.Open(dir)
	if err != nil {
		return nil, err
	}
	return claim.New(b, owner)
}

// TestLibraryRacesCommand: a Go program using only sessions and claim
// races `pickup claim`/`pickup next` on another board of the same
// database, round after round: exactly one wins each session, the loser
// gets ErrSessionNotAvailable (or exit 3), and the database agrees.
func TestLibraryRacesCommand(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 2)
	libraryEnv(t, cs[0].home)
	for round := range 8 {
		id := strings.TrimSpace(cs[round%2].must("", "new", "-t", fmt.Sprintf("round %d", round)))
		cs[1].must("", "sync")
		libOwner, cliOwner := fmt.Sprintf("lib-%d", round), fmt.Sprintf("cli-%d", round)
		byNext := round%2 == 1
		var libErr error
		var cli result
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			c, err := libClient(cs[1].dir, libOwner)
			if err != nil {
				libErr = err
				return
			}
			defer c.Close()
			<-start
			if byNext {
				var s sessions.Session
				s, libErr = c.NewQueue(claim.NextOptions{}).Next(context.Background())
				if libErr == nil && s.ID != id {
					libErr = fmt.Errorf("next took %s, want %s", s.ID, id)
				}
				if errors.Is(libErr, claim.ErrNothingAvailable) {
					libErr = claim.ErrSessionNotAvailable
				}
			} else {
				_, libErr = c.Claim(context.Background(), id)
			}
		}()
		go func() {
			defer wg.Done()
			<-start
			if byNext {
				cli = cs[0].pickup(context.Background(), cliOwner, "next")
			} else {
				cli = cs[0].pickup(context.Background(), cliOwner, "claim", id)
			}
		}()
		close(start)
		wg.Wait()
		if libErr != nil && !errors.Is(libErr, claim.ErrSessionNotAvailable) {
			t.Fatalf("round %d: the library's claim failed otherwise than losing: %v", round, libErr)
		}
		if cli.code != 0 && cli.code != 3 {
			t.Fatalf("round %d: pickup exit %d, want 0 or 3\n%s", round, cli.code, cli.stderr)
		}
		libWon, cliWon := libErr == nil, cli.code == 0
		if libWon == cliWon {
			t.Fatalf("round %d (next: %v): library won %v, pickup won %v: want exactly one winner\npickup: %s", round, byNext, libWon, cliWon, cli.stderr)
		}
		winner := cliOwner
		if libWon {
			winner = libOwner
		}
		if got := strings.TrimSpace(server.psql(t, db, "SELECT owner FROM pickup_sessions WHERE id = '"+id+"'")); got != winner {
			t.Fatalf("round %d: the database has %s with %q, want %s", round, id, got, winner)
		}
	}
}

// TestLibraryAndCommandsDrain: two library agents and two command-line
// agents on two boards of one database drain it: every session finished
// exactly once, by the one agent told it won it.
func TestLibraryAndCommandsDrain(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 2)
	libraryEnv(t, cs[0].home)
	const n = 24
	var ids []string
	for i := range n {
		ids = append(ids, strings.TrimSpace(cs[0].must("", "new", "-t", fmt.Sprintf("task %d", i))))
	}
	cs[1].must("", "sync")
	var mu sync.Mutex
	won := map[string][]string{}
	note := func(owner, id string) {
		mu.Lock()
		won[id] = append(won[id], owner)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 2 {
		owner := fmt.Sprintf("lib-%d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := libClient(cs[1].dir, owner)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for turn := 0; ; turn++ {
				if turn > 2*n {
					errs <- fmt.Errorf("%s: still claiming after %d sessions of %d (sessions claimed twice?)", owner, turn, n)
					return
				}
				s, err := c.NewQueue(claim.NextOptions{}).Next(context.Background())
				if errors.Is(err, claim.ErrNothingAvailable) {
					return
				}
				if err != nil {
					errs <- fmt.Errorf("%s: next: %w", owner, err)
					return
				}
				note(owner, s.ID)
				if _, err := c.Done(context.Background(), s.ID); err != nil {
					errs <- fmt.Errorf("%s: done %s: %w", owner, s.ID, err)
					return
				}
			}
		}()
	}
	for i := range 2 {
		owner := fmt.Sprintf("cli-%d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for turn := 0; ; turn++ {
				if turn > 2*n {
					errs <- fmt.Errorf("%s: still claiming after %d sessions of %d (sessions claimed twice?)", owner, turn, n)
					return
				}
				res := cs[0].pickup(context.Background(), owner, "next")
				if res.code == 3 {
					return
				}
				if res.code != 0 {
					errs <- fmt.Errorf("%s: pickup next: exit %d\n%s", owner, res.code, res.stderr)
					return
				}
				f := strings.Fields(res.stdout)
				if len(f) < 2 {
					errs <- fmt.Errorf("%s: pickup next said %q", owner, res.stdout)
					return
				}
				note(owner, f[1])
				if res := cs[0].pickup(context.Background(), owner, "done", f[1]); res.code != 0 {
					errs <- fmt.Errorf("%s: pickup done %s: exit %d\n%s", owner, f[1], res.code, res.stderr)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, id := range ids {
		if len(won[id]) != 1 {
			t.Errorf("session %s was won by %v, want exactly one agent", id, won[id])
		}
	}
	if got := strings.TrimSpace(server.psql(t, db, "SELECT count(*) FROM pickup_sessions WHERE state = 'done'")); got != fmt.Sprint(n) {
		t.Errorf("the database has %s sessions done, want %d", got, n)
	}
}

// TestLibraryNetworkTimeout: the library opens a PostgreSQL board with the
// network deadline its config.yaml gives (network_timeout), as the
// commands do: a database that does not answer fails claim.New after it,
// saying so, not after the default 30 s.
func TestLibraryNetworkTimeout(t *testing.T) {
	_, url := newDatabase(t)
	c := clones(t, url, 1)[0]
	libraryEnv(t, c.home)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "postgres://pickup@" + l.Addr().String() + "/nothing?sslmode=disable"
	l.Close()
	cfg := filepath.Join(c.dir, "config.yaml")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "shared: "+url) {
		t.Fatalf("config.yaml does not hold shared: %s:\n%s", url, data)
	}
	data = []byte(strings.Replace(string(data), "shared: "+url, "shared: "+dead, 1) + "network_timeout: 2s\n")
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = libClient(c.dir, "lib")
	if err == nil || !strings.Contains(err.Error(), "network_timeout 2s") {
		t.Fatalf("claim.New on a board whose database does not answer, network_timeout: 2s: %v, want the database's failure after 2 s", err)
	}
	t.Logf("claim.New: %v", err)
}
