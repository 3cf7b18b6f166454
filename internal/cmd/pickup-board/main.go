// Command pickup-board is pickup's live terminal board: `pickup board`
// hands over to it (as git runs git-foo), so that the terminal UI
// libraries never link into the pickup that Claude Code hooks start at
// every tool call. It shows one board (--dir), read-only.
//
// Install it beside pickup:
//
//	go install github.com/pickup-dev/pickup/internal/cmd/pickup-board@latest
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"
	"github.com/pickup-dev/pickup/internal/boardfeed"
	"github.com/pickup-dev/pickup/internal/boardview"
	"github.com/pickup-dev/pickup/sessions"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit codes, as pickup's: 1 an error, 2 a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pickup board", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "the board directory (pickup board passes the one pickup would use)")
	once := fs.Bool("once", false, "print one snapshot as plain text and exit")
	width := fs.Int("width", 0, "--once: columns (default: the terminal's, else 120)")
	height := fs.Int("height", 0, "--once: lines (default: the terminal's, else 40)")
	owner := fs.String("owner", "", "start filtered to this owner")
	tag := fs.String("tag", "", "start filtered to this tag")
	state := fs.String("state", "", "start filtered to this state: todo, doing or failed")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "pickup: error: board takes no arguments\n")
		return 2
	}
	if *dir == "" {
		*dir = os.Getenv("PICKUP_DIR")
	}
	if *dir == "" {
		*dir = ".spx/sessions"
	}
	ui := boardview.UI{Filter: boardview.Filter{Owner: *owner, Tag: *tag}}
	if *state != "" {
		st, err := sessions.ParseState(*state)
		if err != nil || st == sessions.Done {
			fmt.Fprintf(stderr, "pickup: error: --state %q: give todo, doing or failed\n", *state)
			return 2
		}
		ui.Filter.State = st
	}
	if info, err := os.Stat(*dir); err != nil || !info.IsDir() {
		fmt.Fprintf(stderr, "pickup: error: no board at %s\npickup: hint: run `pickup init` to make one, or pass --dir\n", *dir)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	feed, err := boardfeed.Open(ctx, *dir)
	if err != nil {
		fmt.Fprintf(stderr, "pickup: error: %s\n", boardview.Clean(err.Error()))
		return 1
	}
	snap, err := feed.Snapshot()
	if err != nil {
		fmt.Fprintf(stderr, "pickup: error: %s\n", boardview.Clean(err.Error()))
		return 1
	}
	if *once {
		w, h := termSize(stdout, 120, 40)
		if *width > 0 {
			w = *width
		}
		if *height > 0 {
			h = *height
		}
		snap.Watching = true // a snapshot is not stale: it is what the board is now
		fmt.Fprint(stdout, boardview.Plain(boardview.New(snap), &ui, boardview.Options{Width: w, Height: h, Now: time.Now()}))
		return 0
	}
	if !term.IsTerminal(os.Stdout.Fd()) || !term.IsTerminal(os.Stdin.Fd()) {
		fmt.Fprintf(stderr, "pickup: error: the live board needs a terminal\npickup: hint: run `pickup board --once` for a snapshot as plain text\n")
		return 2
	}
	snap.Watching = true
	m := &model{feed: feed, state: boardview.New(snap), ui: ui, w: 120, h: 40}
	// An update reaches the screen within a frame; frames stops the
	// ticker while nothing happens.
	fps := 30
	if n, err := strconv.Atoi(os.Getenv("PICKUP_BOARD_FPS")); err == nil && n > 0 {
		fps = n // for measuring
	}
	m.fps, m.tick = fps, os.Getenv("PICKUP_BOARD_TICK") == "1"
	p := tea.NewProgram(m, tea.WithFPS(fps), tea.WithContext(ctx))
	m.program = p
	go feed.Run(ctx, func(batch []boardview.Event) { p.Send(batchMsg(batch)) })
	if _, err := p.Run(); err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "pickup: error: %s\n", err)
		return 1
	}
	return 0
}

// termSize is the size of the terminal out is, else w×h.
func termSize(out io.Writer, w, h int) (int, int) {
	if f, ok := out.(*os.File); ok {
		if cw, ch, err := term.GetSize(f.Fd()); err == nil && cw > 0 && ch > 0 {
			return cw, ch
		}
	}
	return w, h
}
