package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
	"golang.org/x/sync/errgroup"
)

var demoSessions = []struct {
	prio  sessions.Priority
	title string
	dep   int // index+1 of a session this one depends on, 0 for none
}{
	{sessions.Low, "Tidy the changelog", 0},
	{sessions.High, "Fix the crash on empty input", 0},
	{sessions.Medium, "Add --json to the report command", 0},
	{sessions.High, "Patch the login timeout", 0},
	{sessions.Medium, "Write the migration guide", 3},
	{sessions.Low, "Rename internal helpers", 0},
	{sessions.High, "Release 1.4.1 with both fixes", 2},
	{sessions.Medium, "Speed up the test suite", 0},
	{sessions.Low, "Update the screenshots", 0},
	{sessions.Medium, "Review open pull requests", 0},
	{sessions.High, "Rotate the staging credentials", 0},
	{sessions.Low, "Spell-check the docs", 0},
}

func (r *run) demoCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "demo",
		Usage: "run several concurrent agents over a temporary board and show who got what",
		Description: "Creates a board in a temporary directory with sample sessions of mixed priority (two\n" +
			"of them depend on others), then starts --agents claimer loops, each running the real\n" +
			"`pickup next` and `pickup done` as separate processes, all at once. Prints every\n" +
			"claim in priority order and checks that no session was claimed twice or lost.\n\n" +
			"Example: go run . demo --agents 4",
		Flags: []ucli.Flag{
			&ucli.IntFlag{Name: "agents", Value: 4, Usage: "how many concurrent claimers"},
			&ucli.BoolFlag{Name: "keep", Usage: "keep the temporary board and print where it is"},
		},
		Action: func(c *ucli.Context) error {
			agents := c.Int("agents")
			if agents < 1 || agents > 64 {
				return usageError("--agents must be between 1 and 64")
			}
			return r.demo(agents, c.Bool("keep"))
		},
	}
}

type demoClaim struct {
	agent string
	seq   int
	s     sessions.Session
}

func (r *run) demo(agents int, keep bool) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "pickup-demo-")
	if err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(dir)
	}
	b, err := sessions.Init(dir)
	if err != nil {
		return err
	}
	b.NoSync = true
	start := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	ids := make([]string, len(demoSessions))
	for i, d := range demoSessions {
		m := sessions.Meta{Priority: d.prio, Title: d.title, CreatedAt: start.Add(time.Duration(i) * time.Minute)}
		if d.dep > 0 {
			m.DependsOn = []string{ids[d.dep-1]}
		}
		s, err := b.Create(m, []byte("# "+d.title+"\n"))
		if err != nil {
			return err
		}
		ids[i] = s.ID
	}
	r.printf("board %s: %d sessions in todo, %d agents claiming at once\n\n", dir, len(ids), agents)

	var mu sync.Mutex
	var claims []demoClaim
	seq := 0
	pickup := func(owner string, args ...string) ([]byte, int, error) {
		cmd := exec.Command(exe, append([]string{"--dir", dir, "--owner", owner, "--no-sync", "--json"}, args...)...)
		var out bytes.Buffer
		cmd.Stdout = &out
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out.Bytes(), ee.ExitCode(), nil
		}
		return out.Bytes(), 0, err
	}
	var g errgroup.Group
	for a := 1; a <= agents; a++ {
		owner := fmt.Sprintf("agent-%d", a)
		g.Go(func() error {
			for {
				out, code, err := pickup(owner, "next")
				if err != nil {
					return err
				}
				if code == ExitNotAvailable {
					todo, err := b.ListState(sessions.Todo, true)
					if err != nil {
						return err
					}
					if len(todo) == 0 {
						return nil
					}
					time.Sleep(20 * time.Millisecond) // the rest waits on dependencies
					continue
				}
				if code != 0 {
					return fmt.Errorf("%s: pickup next exited %d: %s", owner, code, out)
				}
				var s sessions.Session
				var raw struct {
					ID string `json:"id"`
				}
				if err := json.Unmarshal(out, &raw); err != nil {
					return fmt.Errorf("%s: %w", owner, err)
				}
				s.ID = raw.ID
				mu.Lock()
				seq++
				claims = append(claims, demoClaim{agent: owner, seq: seq, s: s})
				mu.Unlock()
				time.Sleep(5 * time.Millisecond) // the "work"
				if _, code, err := pickup(owner, "done", raw.ID); err != nil || code != 0 {
					return fmt.Errorf("%s: pickup done %s exited %d: %v", owner, raw.ID, code, err)
				}
			}
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return r.demoReport(b, ids, claims)
}

func (r *run) demoReport(b *sessions.Board, ids []string, claims []demoClaim) error {
	byID := map[string]int{}
	for _, c := range claims {
		byID[c.s.ID]++
	}
	done, err := b.List(sessions.Done)
	if err != nil {
		return err
	}
	order := map[string]sessions.Session{}
	for _, s := range done {
		order[s.ID] = s
	}
	sort.Slice(claims, func(i, j int) bool { return claims[i].seq < claims[j].seq })
	tw := tabwriter.NewWriter(r.env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tAGENT\tPRIORITY\tSESSION\tTITLE")
	for _, c := range claims {
		s := order[c.s.ID]
		title := s.Title
		if len(s.DependsOn) > 0 {
			title += " (after " + s.DependsOn[0] + ")"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", c.seq, c.agent, s.Priority, c.s.ID, title)
	}
	tw.Flush()
	twice, lost := 0, 0
	for _, id := range ids {
		switch byID[id] {
		case 0:
			lost++
		case 1:
		default:
			twice++
		}
	}
	left, err := b.List(sessions.Todo, sessions.Doing)
	if err != nil {
		return err
	}
	r.printf("\ncheck: %d sessions, %d claims, %d claimed twice, %d never claimed, %d done, %d left in todo/doing\n",
		len(ids), len(claims), twice, lost, len(done), len(left))
	if twice > 0 || lost > 0 || len(done) != len(ids) || len(left) > 0 {
		return errors.New("demo check failed: the invariants above do not hold")
	}
	r.printf("ok: every session was claimed exactly once, in priority order as agents became free\n")
	return nil
}
