package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	ucli "github.com/urfave/cli/v2"
)

// boardProgram is the live board's executable. It is a program of its
// own (internal/cmd/pickup-board) so that its terminal UI libraries never
// link into pickup, which Claude Code hooks start at every tool call.
const boardProgram = "pickup-board"

// boardInstall is how to install it beside pickup.
const boardInstall = "go install github.com/pickup-dev/pickup/internal/cmd/pickup-board@latest"

func (r *run) boardCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "board",
		Usage:     "a live, read-only, full-screen board: every owner, what waits, what moves",
		UsageText: "pickup board [--once [--width N] [--height N]] [--filter-owner O] [--filter-tag T] [--filter-state S]",
		Description: "Shows every owner (alive, dead, unknown or stale, and why; host, lease age, last\n" +
			"heartbeat, the sessions it holds and for how long; the dead first), todo in the order\n" +
			"next takes it with what each waits on, the sessions set aside in failed/, the held\n" +
			"locks, and the board's history with the sessions done per five minutes. It follows the\n" +
			"board as it moves (the watcher; a shared board's remote every shared_fetch; a PostgreSQL\n" +
			"board's database at every transition on any machine) and does nothing while nothing changes. Keys: arrows select, enter opens a session, o t s\n" +
			"filter by owner, tag, state, ? help, q quits. --once prints one snapshot as plain text.\n\n" +
			"The board is a program of its own, pickup-board, found beside pickup or on $PATH:\n   " +
			boardInstall + "\n\n" +
			"Examples:\n   pickup board\n   pickup board --once --width 100 --height 30",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "once", Usage: "print one snapshot as plain text and exit"},
			&ucli.IntFlag{Name: "width", Usage: "--once: columns (default: the terminal's, else 120)"},
			&ucli.IntFlag{Name: "height", Usage: "--once: lines (default: the terminal's, else 40)"},
			&ucli.StringFlag{Name: "filter-owner", Usage: "start showing only this owner's sessions"},
			&ucli.StringFlag{Name: "filter-tag", Usage: "start showing only sessions with this tag"},
			&ucli.StringFlag{Name: "filter-state", Usage: "start showing only todo, doing or failed"},
		},
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usageError("board takes no arguments")
			}
			b, err := r.board()
			if err != nil {
				return err
			}
			prog, err := findBoardProgram(r.env.Getenv("PATH"))
			if err != nil {
				return err
			}
			args := []string{boardProgram, "--dir", b.Dir}
			if c.Bool("once") {
				args = append(args, "--once")
			}
			for _, f := range []string{"width", "height"} {
				if c.IsSet(f) {
					args = append(args, "--"+f, strconv.Itoa(c.Int(f)))
				}
			}
			for _, f := range []string{"owner", "tag", "state"} {
				if v := c.String("filter-" + f); v != "" {
					args = append(args, "--"+f, v)
				}
			}
			// Handed over, as git runs git-foo: the board owns the
			// terminal and its exit status is pickup's.
			return syscall.Exec(prog, args, os.Environ())
		},
	}
}

// boardMissing: pickup-board is neither beside pickup nor on $PATH.
type boardMissing struct{}

func (boardMissing) Error() string {
	return "the board program " + boardProgram + " is not installed (looked beside pickup and on $PATH)"
}
func (boardMissing) Hint() string {
	return "install it beside pickup: " + boardInstall + " (release archives ship it beside pickup)"
}

// findBoardProgram looks for pickup-board beside pickup's own executable
// (links resolved: a pickup linked into ~/bin finds the board of its
// install), then on path.
func findBoardProgram(path string) (string, error) {
	if p, ok := findCompanion(path, boardProgram); ok {
		return p, nil
	}
	return "", exitError{code: ExitUsage, err: boardMissing{}}
}

// findCompanion looks for one of pickup's own programs (pickup-board,
// pickup-mcp, pickup-web) beside pickup's executable, links resolved, then on path.
func findCompanion(path, program string) (string, bool) {
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		p := filepath.Join(filepath.Dir(exe), program)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			return p, true
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, program)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}
