package cli

import (
	"fmt"

	"github.com/pickup-dev/pickup/sessions"

	ucli "github.com/urfave/cli/v2"
)

func (r *run) doctorCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "doctor",
		Usage:     "check the board for broken or misplaced files; --fix mends what is safe",
		UsageText: "pickup doctor [--fix] [--json]",
		Description: "Reports, with file and line: broken frontmatter; sessions present in more than one\n" +
			"state (after a git merge) or under two names (a move interrupted by a crash);\n" +
			"temporary files of interrupted writes; symlinks and stray files that are never listed.\n" +
			"--fix keeps the most advanced copy of a duplicated session (done > doing > todo), moves\n" +
			"every discarded copy whose content differs to conflicts/ instead of deleting it, and\n" +
			"removes temporary files older than a minute. Exit 0 when the board is healthy or\n" +
			"everything was fixed, 1 when problems remain.\n\nExample: pickup doctor --fix",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "fix", Usage: "repair what can be repaired without losing anything"},
		},
		Action: func(c *ucli.Context) error {
			b, err := r.board()
			if err != nil {
				return err
			}
			findings, err := b.Check(c.Bool("fix"))
			if err != nil {
				return err
			}
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
					r.printf("%s: %s: %s\n", loc, f.Kind, sanitize(f.Message))
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
