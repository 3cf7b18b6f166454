package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/claude"
	"github.com/pickup-dev/pickup/sessions"

	ucli "github.com/urfave/cli/v2"
)

func (r *run) doctorCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "doctor",
		Usage:     "check the board for broken or misplaced files; --fix mends what is safe",
		UsageText: "pickup doctor [--fix] [--json]",
		Description: "Reports, with file and line: broken frontmatter; unreadable session files; sessions in more than one\n" +
			"state (after a git merge) or under two names (a move interrupted by a crash);\n" +
			"temporary files of interrupted writes; symlinks and stray files that are never listed;\n" +
			"leases of owners whose process is dead and who still hold sessions; mistakes in\n" +
			"config.yaml, with their lines (a dead owner's lease that holds nothing is not a problem:\n" +
			"every pickup work leaves one; --fix tidies it away); dependencies that make a session\n" +
			"wait forever (an id that no state holds, a cycle of depends_on), at the depends_on line;\n" +
			"sessions whose history in events.log ends somewhere else than where they are (a move\n" +
			"whose line a crash or a full disk lost); lines of events.log that are not events (torn\n" +
			"part-way, or edited by hand); links (and pipes) where the board keeps its own files, which\n" +
			"every other command refuses; agent setups (pickup init --claude, --codex, --gemini) whose\n" +
			"hooks or skills are stale or broken (run the init again). While such a link is there, --fix fixes nothing; while the\n" +
			"git work tree is in the middle of a stopped rebase or merge, --fix exits 2.\n" +
			"--fix keeps the copy of a duplicated session that events.log says: of two claims (two\n" +
			"doing/ folders) the one that came first, fencing the other owner (its done exits 6);\n" +
			"a done/ copy unless the session was reopened since; where the history cannot tell two\n" +
			"claims apart it moves nothing and says what to do. It moves every discarded copy whose\n" +
			"content differs to conflicts/ instead of deleting it (a byte-identical one is removed),\n" +
			"removes temporary files older than a minute, and returns the sessions of dead owners to\n" +
			"todo/ (as pickup reap does) and removes their leases, appends a doctor line (with its reason)\n" +
			"for every move the history missed, and blanks out torn lines in place (a line edited by hand is\n" +
			"only reported). Exit 0 when the board is healthy or\n" +
			"everything was fixed, 1 when problems remain.\n\nExample: pickup doctor --fix",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "fix", Usage: "repair what can be repaired without losing anything"},
		},
		Action: func(c *ucli.Context) error {
			// doctor reports links and a bad config.yaml; --fix changes the
			// board, so like every such command it needs a good config first.
			b, err := r.inspectBoard()
			if c.Bool("fix") {
				b, err = r.changingBoardWith(sessions.Inspect)
			}
			if err != nil {
				return err
			}
			// A session claimed twice keeps the first claim; the other
			// owner is fenced (its done exits 6) before its copy goes.
			findings, err := b.CheckWith(sessions.CheckOptions{Repair: c.Bool("fix"), Fence: r.leases(b).Fence})
			if err != nil {
				return err
			}
			findings = append(configFindings(b), inCLITerms(findings)...)
			findings = append(findings, r.sharedFindings(b)...)
			dead, err := r.deadLeases(b, c.Bool("fix"))
			if err != nil {
				return err
			}
			findings = append(findings, dead...)
			findings = append(findings, r.agentSetupFindings()...)
			open := 0
			for _, f := range findings {
				if f.Fix == "" {
					open++
				}
			}
			if r.json {
				if findings == nil {
					findings = []sessions.Finding{}
				}
				if err := r.printJSON(map[string]any{"board": b.Dir, "findings": findings, "unresolved": open}); err != nil {
					return err
				}
			} else {
				for _, f := range findings {
					loc := f.Path
					if f.Line > 0 {
						loc = fmt.Sprintf("%s:%d", f.Path, f.Line)
					}
					r.printf("%s: %s: %s\n", sanitize(loc), f.Kind, sanitize(f.Message))
					if f.Fix != "" {
						r.printf("  fixed: %s\n", f.Fix)
					}
				}
				if len(findings) == 0 {
					r.printf("board %s is healthy\n", b.Dir)
				} else {
					r.printf("%d problem(s), %d unresolved\n", len(findings), open)
				}
			}
			if open > 0 {
				return exitError{code: ExitError, err: fmt.Errorf("doctor found %d unresolved problem(s) on %s", open, b.Dir), quiet: true}
			}
			return nil
		},
	}
}

// agentSetupFindings reports the agents' setups (pickup init --claude,
// --codex, --gemini) in the repository that are stale or broken; --fix
// leaves them alone: init rewrites them, and only when asked.
func (r *run) agentSetupFindings() []sessions.Finding {
	top, err := r.claudeRepoTop()
	if err != nil {
		return nil
	}
	var out []sessions.Finding
	for _, p := range claude.Check(top) {
		out = append(out, sessions.Finding{Kind: "agent-setup", Path: p.Path, Message: p.Message})
	}
	return out
}

// exitError carries an exit code; quiet ones print nothing more (the
// command already said what is wrong).
type exitError struct {
	code  int
	err   error
	quiet bool
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }
func (e exitError) ExitCode() int { return e.code }

// deadLeases reports the leases of owners whose process has exited (or
// whose machine rebooted): their sessions are reclaimable. With fix, their
// sessions go back to todo/ (as pickup reap does) and the leases are removed.
func (r *run) deadLeases(b *sessions.Board, fix bool) ([]sessions.Finding, error) {
	if b.Unsafe() != nil {
		return nil, nil // a link where pickup works: fix that first (reported)
	}
	dir := filepath.Join(b.RuntimeDir(), "leases")
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	leases := r.leases(b)
	var out []sessions.Finding
	var owners []string
	for _, e := range entries {
		owner, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || sessions.ValidateOwner(owner) != nil {
			continue
		}
		state, _, reason := leases.Judge(owner, claim.DefaultStale)
		if state != claim.OwnerDead {
			continue
		}
		list, _ := b.ListOwner(owner)
		if len(list) == 0 {
			// What every pickup work leaves when it exits: nothing to
			// recover, so no problem. --fix tidies it away.
			if fix {
				_, _ = leases.Tidy(owner)
			}
			continue
		}
		out = append(out, sessions.Finding{Kind: "lease", Path: filepath.Join(dir, e.Name()),
			Message: fmt.Sprintf("owner %s is dead (%s) and holds %d session(s); `pickup next` or `pickup reap` returns them to todo/", owner, reason, len(list))})
		owners = append(owners, owner)
	}
	if !fix || len(out) == 0 {
		return out, nil
	}
	reaped, err := leases.Reap(claim.ReapOptions{OnlyDead: true})
	if err != nil {
		return out, err
	}
	count := map[string]int{}
	for _, x := range reaped {
		if x.Err == "" {
			count[x.Owner]++
		}
	}
	for i, owner := range owners {
		if _, err := leases.Get(owner); err == nil {
			if leases.Remove(owner) != nil {
				continue
			}
		}
		out[i].Fix = fmt.Sprintf("returned %d session(s) to todo/ and removed the lease", count[owner])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}
