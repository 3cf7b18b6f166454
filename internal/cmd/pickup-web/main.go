// Command pickup-web is pickup's web board: `pickup serve` hands over to
// it (as `pickup board` hands over to pickup-board), so that net/http and
// the page never link into the pickup that Claude Code hooks start at
// every tool call. It serves one board (--dir): the same folded state and
// event feed as pickup-board (internal/boardfeed, internal/boardview),
// rendered with html/template and streamed to each page over Server-Sent
// Events. It does no work while the board does not change.
//
// It listens on 127.0.0.1 unless --addr says otherwise, and then only
// with a token; it answers only to its own address (Host), never to
// another origin, and changes nothing unless started with --actions.
//
// Install it beside pickup:
//
//	go install github.com/pickup-dev/pickup/internal/cmd/pickup-web@latest
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pickup-dev/pickup/internal/boardfeed"
	"github.com/pickup-dev/pickup/internal/boardview"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// DefaultAddr is where pickup serve listens unless told.
const DefaultAddr = "127.0.0.1:7077"

type hostList []string

func (h *hostList) String() string     { return strings.Join(*h, ",") }
func (h *hostList) Set(v string) error { *h = append(*h, v); return nil }

// Exit codes, as pickup's: 1 an error, 2 a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pickup serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "the board directory (pickup serve passes the one pickup would use)")
	addr := fs.String("addr", DefaultAddr, "where to listen: host:port (a port of 0 picks a free one)")
	token := fs.String("token", "", "the token a browser must present (default: $PICKUP_WEB_TOKEN, else one is generated when needed)")
	act := fs.Bool("actions", false, "let the page act: give back a dead owner's sessions, requeue, change a priority, make a session")
	var hosts hostList
	fs.Var(&hosts, "host", "another name the server answers to (a DNS name that points here); repeatable")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(code int, msg, hint string) int {
		fmt.Fprintf(stderr, "pickup: error: %s\n", msg)
		if hint != "" {
			fmt.Fprintf(stderr, "pickup: hint: %s\n", hint)
		}
		return code
	}
	if fs.NArg() > 0 {
		return fail(2, "serve takes no arguments", "")
	}
	if *dir == "" {
		*dir = os.Getenv("PICKUP_DIR")
	}
	if *dir == "" {
		*dir = ".spx/sessions"
	}
	if *token == "" {
		*token = os.Getenv("PICKUP_WEB_TOKEN")
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		return fail(2, fmt.Sprintf("--addr %q: %v", *addr, err), "give host:port, such as 127.0.0.1:7077")
	}
	loopback := isLoopback(host)
	if !loopback && *token == "" {
		return fail(2, fmt.Sprintf("--addr %s listens beyond this machine: it needs a token", *addr),
			"give --token TOKEN (or $PICKUP_WEB_TOKEN), at least 16 characters; everyone who opens the board needs it")
	}
	if *token != "" && len(*token) < 16 {
		return fail(2, "--token is too short: give at least 16 characters", "")
	}
	if *token == "" && *act {
		*token = newToken() // actions always need one
	}
	if info, err := os.Stat(*dir); err != nil || !info.IsDir() {
		return fail(1, "no board at "+*dir, "run `pickup init` to make one, or pass --dir")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	feed, err := boardfeed.Open(ctx, *dir)
	if err != nil {
		return fail(1, boardview.Clean(err.Error()), "")
	}
	snap, err := feed.Snapshot()
	if err != nil {
		return fail(1, boardview.Clean(err.Error()), "")
	}
	snap.Watching = true
	var acts *actions
	if *act {
		if acts, err = openActions(*dir); err != nil {
			return fail(1, boardview.Clean(err.Error()), "on a shared board --actions needs its git remote or database to answer; or run pickup serve without --actions (read-only), and act with the CLI")
		}
		defer acts.Close()
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fail(1, fmt.Sprintf("listen on %s: %v", *addr, err), "another program has that port: give --addr 127.0.0.1:0 for a free one")
	}
	bound := ln.Addr().(*net.TCPAddr)
	g := &guard{hosts: ownHosts(bound, hosts), token: *token, readToken: !loopback, cookie: "pickup_token_" + strconv.Itoa(bound.Port)}
	tmpl := templates()
	h := newHub(feed, snap, renderer(tmpl, acts != nil))
	srv := &server{hub: h, guard: g, tmpl: tmpl, actions: acts, dir: feed.B.Dir}
	// Requests end with ctx: the streams close at once on Ctrl-C.
	hs := &http.Server{Handler: srv.routes(), ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	h.rerender() // the first rendering before the first page asks for it
	go h.run(ctx)
	shown := bound.String()
	if loopback && bound.IP.IsLoopback() {
		shown = net.JoinHostPort(bound.IP.String(), strconv.Itoa(bound.Port))
	} else if bound.IP.IsUnspecified() {
		if name, err := os.Hostname(); err == nil {
			shown = net.JoinHostPort(name, strconv.Itoa(bound.Port))
		}
	}
	u := "http://" + shown + "/"
	if *token != "" {
		u += "?token=" + *token
	}
	mode := "read-only"
	if acts != nil {
		mode = "actions on"
	}
	fmt.Fprintf(stdout, "pickup serve: the board %s at %s (%s; Ctrl-C stops)\n", feed.B.Dir, u, mode)
	if f, ok := stdout.(*os.File); ok {
		_ = f.Sync()
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return fail(1, err.Error(), "")
		}
	}
	shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = hs.Shutdown(shut)
	return 0
}
