// Package mcpserver serves one pickup board to one MCP client (an agent:
// Claude Code, Codex, Gemini CLI, Cursor, …) over one connection, with
// tools named after pickup's commands: next, claim, done, release, new,
// list and show.
//
// The guarantee is pickup's: each session is worked by exactly one live
// agent. Every transition goes through the library (sessions.Open,
// claim.New, Client.Next/Claim/Done/Release), so it is the same atomic
// no-replace rename the CLI makes, and a lost race is an answer, not a
// failure.
//
// Each connection is its own owner unless one is given (Config.Owner: the
// --owner flag or $PICKUP_OWNER): the client's name from initialize plus a
// random suffix, such as claude-code-mcp-3fa85f64, so that two agents with
// a server each never share an owner and `pickup status` says which agent
// holds what.
//
// The owner's lease follows the agent that started the server (the
// processes proc.Env.Invokers finds above it, as for any pickup command),
// not the server itself: when the agent dies, even by SIGKILL and even if
// the server lingers (its standard input kept open by another process),
// the next `next` of anyone takes its claims back at once. When the
// connection ends (standard input closed, SIGTERM, SIGINT, SIGHUP, or the
// server's parent gone), the server gives back what the owner holds: a
// dead agent's claims are reaped (the attempt counted, as for a killed
// Claude Code), a live one's released, and the lease removed.
//
// Limits: a server killed with SIGKILL while its agent runs gives nothing
// back; the claims stay with the live agent until it exits (in doubt, a
// claim stays). A server started with no process above it that can be
// known (no /proc) ties the lease to itself.
package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/claimhook"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// Config is what one server serves and as whom.
type Config struct {
	// Dir is the board directory (boardloc.Find: --dir, $PICKUP_DIR, the
	// repository's .spx/sessions).
	Dir string
	// Owner, if set, is the owner every transition is made as (--owner or
	// $PICKUP_OWNER); else the connection makes its own from the client's
	// name.
	Owner string
	// Version is reported to the client in initialize.
	Version string
	// Proc is how the server learns about processes; its zero value is the
	// real system.
	Proc proc.Env
	// Log receives one line per thing given back at the end, and
	// failures that no tool call could report (standard error).
	Log io.Writer
}

// leaseRefresh is how often a claim renews an unchanged lease (as the
// CLI's claims do).
const leaseRefresh = time.Minute

// server is the state of one connection.
type server struct {
	cfg Config

	mu      sync.Mutex
	owner   string
	board   *sessions.Board
	client  *claim.Client
	holders []proc.Process
	leased  bool            // the lease was registered: remove it at the end
	claimed map[string]bool // sessions this connection claimed
	closing bool            // the connection ended: no more calls

	inflight sync.WaitGroup // tool calls under way (see tracked)
}

// enter counts a tool call in, unless the connection has ended.
func (s *server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.inflight.Add(1)
	return true
}

// Run serves the board over t until the client goes or ctx ends, then
// gives back what the connection's owner holds.
func Run(ctx context.Context, cfg Config, t mcp.Transport) error {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.Owner != "" {
		if err := sessions.ValidateOwner(cfg.Owner); err != nil {
			return fmt.Errorf("owner: %w", err)
		}
	}
	s := &server{cfg: cfg, claimed: map[string]bool{}}
	ms := mcp.NewServer(&mcp.Implementation{Name: "pickup", Version: cfg.Version}, &mcp.ServerOptions{
		Instructions: instructions,
	})
	s.addTools(ms)
	ss, err := ms.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case err = <-ended:
	case <-ctx.Done():
		ss.Close()
		<-ended
	}
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.inflight.Wait() // a claim under way lands before the give-back
	s.giveBack()
	s.mu.Lock()
	if s.client != nil {
		if err := s.client.Close(); err != nil { // the arbiter's connection, if any
			fmt.Fprintf(s.cfg.Log, "pickup mcp: close the board's arbiter: %v\n", err)
		}
	}
	s.mu.Unlock()
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil // the client went, or the server was told to stop
	}
	return err
}

// instructions tell the agent, once, how the tools fit together.
const instructions = "pickup shares one backlog of work sessions between agents. Call next to claim the best session " +
	"(or claim ID), work it, then call done with its id; release gives it back. Each session is yours alone " +
	"until then; a claim lost to another agent is an answer that says what to do next."

// ownerFor names a connection's owner after its client: the client's name
// (as a valid owner name, at most 40 characters), "-mcp-" and 8 random hex
// digits, unique for every connection on every machine.
func ownerFor(clientName string) string {
	var suffix [4]byte
	_, _ = rand.Read(suffix[:]) // never fails (crypto/rand panics instead)
	name := strings.Trim(sessions.SanitizeOwner(strings.ToLower(clientName)), "-")
	if len(name) > 40 {
		name = strings.TrimRight(name[:40], "-._")
	}
	if name == "" || name == "-" {
		name = "agent"
	}
	return name + "-mcp-" + hex.EncodeToString(suffix[:])
}

// ready returns the claim client of this connection, opening the board
// and naming the owner on the first call that needs them. A board that
// cannot be opened is tried again at the next call (pickup init may come
// in between).
func (s *server) ready(req *mcp.CallToolRequest) (*claim.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client != nil {
		return s.client, nil
	}
	if s.owner == "" {
		s.owner = s.cfg.Owner
		if s.owner == "" {
			name := ""
			if req != nil && req.Session != nil {
				if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil {
					name = p.ClientInfo.Name
				}
			}
			s.owner = ownerFor(name)
		}
	}
	b, err := sessions.Open(s.cfg.Dir)
	if err != nil {
		if errors.Is(err, sessions.ErrNoBoard) || errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no board at %s: run `pickup init` in the repository (or start the server with --dir or $PICKUP_DIR)", s.cfg.Dir)
		}
		return nil, fmt.Errorf("open board %s: %w", s.cfg.Dir, err)
	}
	if cfg, err := b.Config(); err != nil {
		return nil, fmt.Errorf("read board settings: %w", err)
	} else if cfg.LineupAge != 0 {
		b.LineupAge = cfg.LineupAge
	}
	c, err := claim.New(b, s.owner)
	if err != nil {
		return nil, fmt.Errorf("owner %s: %w", s.owner, err)
	}
	s.board, s.client = b, c // closed by serve, after the give-back
	return c, nil
}

// changing is ready for a tool that moves sessions. On a shared board
// (git remote, PostgreSQL) claim.New has attached the board's arbiter, so
// the server's transitions are won there exactly as the CLI's are; a
// shared board whose arbiter cannot be opened fails in ready and moves
// nothing.
func (s *server) changing(req *mcp.CallToolRequest) (*claim.Client, error) {
	return s.ready(req)
}

// lease makes the agent's processes the owner's lease holders before a
// claim; a dead earlier run of a fixed owner is taken up first (see
// claim.Leases.Ensure).
func (s *server) lease(c *claim.Client) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holders == nil {
		s.holders = s.cfg.Proc.Invokers()
		if len(s.holders) == 0 {
			// Nothing above the server can be known: tie the lease to
			// the server itself, which gives back at its end.
			s.holders = []proc.Process{s.cfg.Proc.Self()}
		}
	}
	leases := s.leases(c.Board)
	holders := make([]claim.Holder, len(s.holders))
	for i, p := range s.holders {
		holders[i] = claim.Holder(p)
	}
	taken, err := leases.Ensure(c.Owner, leaseRefresh, claim.ReapOptions{}, holders...)
	for _, x := range taken {
		fmt.Fprintf(s.cfg.Log, "pickup mcp: %s was still held by an earlier run of %s whose processes exited; returned it to todo\n", x.ID, c.Owner)
	}
	if err == nil {
		s.leased = true
	}
	return err
}

func (s *server) noteClaimed(id string, held bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if held {
		s.claimed[id] = true
	} else {
		delete(s.claimed, id)
	}
}

// giveBack runs when the connection has ended: the owner's claims come
// back to todo/ now. If the agent's processes all exited, they are reaped
// (the attempt counted, as for any dead agent); else released. An owner of
// the connection's own loses its lease; a given owner (--owner), which
// other processes may share, only the sessions this connection claimed.
func (s *server) giveBack() {
	s.mu.Lock()
	c, leased := s.client, s.leased
	var mine []string
	for id := range s.claimed {
		mine = append(mine, id)
	}
	s.mu.Unlock()
	if c == nil || !leased {
		return
	}
	leases := s.leases(c.Board)
	if state, _, _ := leases.Judge(c.Owner, 0); state == claim.OwnerDead {
		reaped, err := leases.Reap(claim.ReapOptions{OnlyDead: true})
		for _, r := range reaped {
			fmt.Fprintf(s.cfg.Log, "pickup mcp: reaped %s of %s (%s)\n", r.ID, r.Owner, r.Reason)
		}
		if err != nil {
			fmt.Fprintf(s.cfg.Log, "pickup mcp: reap: %v\n", err)
		}
	}
	if s.cfg.Owner == "" {
		released, err := c.ReleaseAll(context.Background())
		for _, r := range released {
			fmt.Fprintf(s.cfg.Log, "pickup mcp: released %s (the client went away)\n", r.ID)
		}
		if err != nil {
			fmt.Fprintf(s.cfg.Log, "pickup mcp: release: %v\n", err)
		}
		if err := leases.Remove(c.Owner); err != nil {
			fmt.Fprintf(s.cfg.Log, "pickup mcp: remove lease: %v\n", err)
		}
		return
	}
	for _, id := range mine {
		if _, err := c.Release(context.Background(), id); err == nil {
			fmt.Fprintf(s.cfg.Log, "pickup mcp: released %s (the client went away)\n", id)
		}
	}
}

// leases is b's lease records, judged with the server's view of processes.
func (s *server) leases(b *sessions.Board) *claim.Leases {
	l := &claim.Leases{Board: b}
	claimhook.UseSystem(l, s.cfg.Proc)
	return l
}
