package cli

import (
	"fmt"
	"strings"
	"sync"

	"github.com/pickup-dev/pickup/sessions"
)

// batch makes the transitions on b one commit in commit mode, instead of
// one each: until the returned commit function runs, b's events are only
// collected; commit then commits every path they moved and the event log
// at once, under subject. A Claude Code session that ends holding 8
// sessions releases them in one commit (git add + commit once), within
// SessionEnd's time. Without commit mode commit does nothing.
func (c *committer) batch(b *sessions.Board) (commit func(subject string)) {
	var mu sync.Mutex
	var paths, lines []string
	b.OnEvent = func(ev sessions.Event, logErr error) {
		if logErr != nil {
			c.mu.Lock()
			c.warns = append(c.warns, fmt.Sprintf("%s %s happened but is missing from %s: %v", ev.Op, ev.ID, sessions.EventLogFile, logErr))
			c.mu.Unlock()
		}
		mu.Lock()
		defer mu.Unlock()
		paths = append(paths, ev.Src, ev.Dst)
		from := ev.From
		if from == "" {
			from = "(new)"
		}
		lines = append(lines, fmt.Sprintf("%s %s: %s -> %s", ev.Op, ev.ID, from, ev.To))
	}
	return func(subject string) {
		b.OnEvent = c.hook(b)
		mu.Lock()
		defer mu.Unlock()
		if len(lines) == 0 {
			return
		}
		c.mu.Lock()
		on, err := c.decide(b)
		repo, lock := c.repo, c.lock
		c.mu.Unlock()
		if err == nil && on {
			msg := subject + "\n\n" + strings.Join(lines, "\n") + "\n"
			err = commitPaths(repo, lock, msg, append(paths, b.EventLogPath())...)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if err != nil {
			c.errs = append(c.errs, fmt.Errorf("%s: %w", subject, err))
		} else if on {
			c.commits++
		}
	}
}
