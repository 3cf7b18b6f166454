package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/textsafe"
	"github.com/pickup-dev/pickup/sessions"
)

// Result is the structured content of every tool's answer about one
// session. Outcome says what happened: claimed, done, released, created,
// shown, lost (the session is not, or no longer, this owner's: take
// another) or none (next found nothing to claim). Message is the answer's
// text, what to do next included: some clients (Claude Code) show the
// model the structured content instead of the text.
type Result struct {
	Outcome string `json:"outcome"`
	Message string `json:"message,omitempty"`
	ID      string `json:"id,omitempty"`
	State   string `json:"state,omitempty"`
	Owner   string `json:"owner,omitempty"`
	Title   string `json:"title,omitempty"`
	File    string `json:"file,omitempty"`
}

// Listing is list's structured content.
type Listing struct {
	Message  string   `json:"message"`
	Sessions []Result `json:"sessions"`
}

// The tools' inputs: small on purpose, since every agent pays for the
// schemas in its context.
type (
	nextIn struct {
		Tags []string `json:"tags,omitempty" jsonschema:"only sessions with all these tags"`
	}
	idIn struct {
		ID string `json:"id" jsonschema:"session id"`
	}
	newIn struct {
		Title    string   `json:"title"`
		Body     string   `json:"body,omitempty" jsonschema:"markdown: what to do"`
		Priority string   `json:"priority,omitempty" jsonschema:"high, medium (default) or low"`
		Tags     []string `json:"tags,omitempty"`
		After    []string `json:"after,omitempty" jsonschema:"ids that must be done first"`
	}
	listIn struct {
		State string `json:"state,omitempty" jsonschema:"todo, doing, done or failed (default: all)"`
	}
)

func (s *server) addTools(ms *mcp.Server) {
	mcp.AddTool(ms, &mcp.Tool{Name: "next", Description: "Claim the best available session (by priority, then age) for you alone."}, tracked(s, s.next))
	mcp.AddTool(ms, &mcp.Tool{Name: "claim", Description: "Claim one session by id."}, tracked(s, s.claimOne))
	mcp.AddTool(ms, &mcp.Tool{Name: "done", Description: "Finish a session you claimed."}, tracked(s, s.done))
	mcp.AddTool(ms, &mcp.Tool{Name: "release", Description: "Give a session you claimed back to the queue, unfinished."}, tracked(s, s.release))
	mcp.AddTool(ms, &mcp.Tool{Name: "new", Description: "Create a session in todo for any agent to take."}, tracked(s, s.create))
	mcp.AddTool(ms, &mcp.Tool{Name: "list", Description: "List sessions in the order next takes them."}, tracked(s, s.list))
	mcp.AddTool(ms, &mcp.Tool{Name: "show", Description: "Show a session's file."}, tracked(s, s.show))
}

// tracked counts h's calls in flight, so that the end of the connection
// waits for a claim under way before it gives back (else that claim would
// land after the give-back, held by an owner with no lease), and refuses
// calls that come after.
func tracked[In, Out any](s *server, h mcp.ToolHandlerFor[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		if !s.enter() {
			var zero Out
			return nil, zero, errors.New("the server is shutting down: its client went away")
		}
		defer s.inflight.Done()
		return h(ctx, req, in)
	}
}

func (s *server) next(ctx context.Context, req *mcp.CallToolRequest, in nextIn) (*mcp.CallToolResult, Result, error) {
	filter, err := sessions.NewTagFilter(in.Tags, nil)
	if err != nil {
		return nil, Result{}, err
	}
	c, err := s.changing(req)
	if err != nil {
		return nil, Result{}, err
	}
	if err := s.lease(c); err != nil {
		return nil, Result{}, err
	}
	got, err := c.NewQueue(claim.NextOptions{Filter: filter}).Next(ctx)
	err = c.Explain(err)
	if errors.Is(err, claim.ErrNothingAvailable) {
		return reply(textsafe.Line(err.Error())+"\nNo session is waiting for you now: stop, or call next again later.", Result{Outcome: "none"})
	}
	if err != nil {
		return nil, Result{}, err
	}
	s.noteClaimed(got.ID, true)
	return claimed(got)
}

func (s *server) claimOne(ctx context.Context, req *mcp.CallToolRequest, in idIn) (*mcp.CallToolResult, Result, error) {
	c, err := s.changing(req)
	if err != nil {
		return nil, Result{}, err
	}
	if err := s.lease(c); err != nil {
		return nil, Result{}, err
	}
	got, err := c.Claim(ctx, in.ID)
	if r, ok := lost(in.ID, err, "do not work on it; call next to take another session"); ok {
		return r.answer()
	}
	if err != nil {
		return nil, Result{}, explain(err)
	}
	s.noteClaimed(got.ID, true)
	return claimed(got)
}

func claimed(got sessions.Session) (*mcp.CallToolResult, Result, error) {
	return reply(fmt.Sprintf("claimed %s\n  file: %s\nIt is yours alone until you call done (finished) or release (given back) with id %q. Read the file, then do the work.",
		describe(got), got.Path, got.ID), resultOf("claimed", got))
}

func (s *server) done(ctx context.Context, req *mcp.CallToolRequest, in idIn) (*mcp.CallToolResult, Result, error) {
	return s.finish(ctx, req, in.ID, "done", (*claim.Client).Done)
}

func (s *server) release(ctx context.Context, req *mcp.CallToolRequest, in idIn) (*mcp.CallToolResult, Result, error) {
	return s.finish(ctx, req, in.ID, "released", (*claim.Client).Release)
}

// finish is done and release: the session leaves this owner.
func (s *server) finish(ctx context.Context, req *mcp.CallToolRequest, id, verb string, move func(*claim.Client, context.Context, string) (sessions.Session, error)) (*mcp.CallToolResult, Result, error) {
	c, err := s.changing(req)
	if err != nil {
		return nil, Result{}, err
	}
	got, err := move(c, ctx, id)
	if r, ok := lost(id, err, "do not finish it; call next to take other work"); ok {
		s.noteClaimed(id, false)
		return r.answer()
	}
	if err != nil {
		return nil, Result{}, explain(err)
	}
	s.noteClaimed(id, false)
	return reply(fmt.Sprintf("%s %s\n  file: %s", verb, describe(got), got.Path), resultOf(verb, got))
}

func (s *server) create(ctx context.Context, req *mcp.CallToolRequest, in newIn) (*mcp.CallToolResult, Result, error) {
	if strings.TrimSpace(in.Title) == "" && strings.TrimSpace(in.Body) == "" {
		return nil, Result{}, errors.New("nothing to create: give a title (and a body); nothing was created")
	}
	o := sessions.Override{Tags: in.Tags, DependsOn: in.After}
	if in.Title != "" {
		o.Title = &in.Title
	}
	if in.Priority != "" {
		p, err := sessions.ParsePriority(in.Priority)
		if err != nil {
			return nil, Result{}, err
		}
		o.Priority = &p
	}
	c, err := s.changing(req)
	if err != nil {
		return nil, Result{}, err
	}
	got, err := c.Board.CreateFrom("body", []byte(in.Body), o)
	if err != nil {
		return nil, Result{}, err
	}
	return reply(fmt.Sprintf("created %s in todo\n  file: %s", describe(got), got.Path), resultOf("created", got))
}

// maxListed bounds list's text: an agent's context is not a terminal.
const maxListed = 100

func (s *server) list(ctx context.Context, req *mcp.CallToolRequest, in listIn) (*mcp.CallToolResult, Listing, error) {
	var states []sessions.State
	if in.State != "" {
		st, err := sessions.ParseState(in.State)
		if err != nil {
			return nil, Listing{}, err
		}
		states = append(states, st)
	}
	c, err := s.ready(req)
	if err != nil {
		return nil, Listing{}, err
	}
	all, err := c.Board.List(states...)
	if err != nil {
		return nil, Listing{}, err
	}
	out := Listing{Sessions: []Result{}}
	var b strings.Builder
	for i, x := range all {
		if i == maxListed {
			fmt.Fprintf(&b, "… and %d more (list one state to see fewer)\n", len(all)-maxListed)
			break
		}
		owner := x.Owner
		if owner == "" {
			owner = "-"
		}
		fmt.Fprintf(&b, "%s %s %s\n", x.State, textsafe.Line(owner), describe(x))
		out.Sessions = append(out.Sessions, resultOf("listed", x))
	}
	if len(all) == 0 {
		b.WriteString("no sessions\n")
	}
	out.Message = strings.TrimSuffix(b.String(), "\n")
	return text(out.Message), out, nil
}

func (s *server) show(ctx context.Context, req *mcp.CallToolRequest, in idIn) (*mcp.CallToolResult, Result, error) {
	c, err := s.ready(req)
	if err != nil {
		return nil, Result{}, err
	}
	places, err := c.Board.Locate(in.ID)
	if err != nil {
		return nil, Result{}, err
	}
	if len(places) == 0 {
		return nil, Result{}, fmt.Errorf("no session %s on this board: call list to see the ids", in.ID)
	}
	got, content, err := c.Board.Read(places[0])
	if err != nil {
		return nil, Result{}, err
	}
	head := fmt.Sprintf("%s %s", got.State, describe(got))
	if got.Owner != "" {
		head += " (claimed by " + textsafe.Line(got.Owner) + ")"
	}
	return reply(head+"\n  file: "+got.Path+"\n\n"+textsafe.Text(string(content)), resultOf("shown", got))
}

// lostAnswer is a normal answer that the session is not this owner's.
type lostAnswer struct {
	msg string
	r   Result
}

func (l lostAnswer) answer() (*mcp.CallToolResult, Result, error) { return reply(l.msg, l.r) }

// lost turns a lost race or a reaped claim into an answer that says what
// to do next; other errors are not lost (false).
func lost(id string, err error, then string) (lostAnswer, bool) {
	var e *claim.Error
	if err == nil || !errors.As(err, &e) {
		return lostAnswer{}, false
	}
	r := Result{Outcome: "lost", ID: id, State: string(e.State), Owner: e.Holder}
	switch {
	case errors.Is(err, claim.ErrClaimLost):
		return lostAnswer{fmt.Sprintf("%s: your claim on %s was taken back (your agent was judged gone) and the session went back to the queue or to another agent; %s.",
			textsafe.Line(err.Error()), id, then), r}, true
	case errors.Is(err, claim.ErrSessionNotAvailable):
		return lostAnswer{fmt.Sprintf("%s: %s is not yours; %s.", textsafe.Line(err.Error()), id, then), r}, true
	}
	return lostAnswer{}, false
}

// explain adds what to do to the errors an agent can fix.
func explain(err error) error {
	if errors.Is(err, claim.ErrSessionNotFound) || errors.Is(err, sessions.ErrInvalidID) {
		return fmt.Errorf("%s: call list to see the sessions and their ids", err)
	}
	return err
}

// reply is an answer: msg as text, and r with msg as its message.
func reply(msg string, r Result) (*mcp.CallToolResult, Result, error) {
	r.Message = msg
	return text(msg), r, nil
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// describe is a session in one line, as the CLI prints it: id, priority,
// title (escaped: titles come from files).
func describe(x sessions.Session) string {
	line := fmt.Sprintf("%s [%s]", x.ID, x.Priority)
	if x.Title != "" {
		line += " " + textsafe.Line(x.Title)
	}
	return line
}

func resultOf(outcome string, x sessions.Session) Result {
	return Result{Outcome: outcome, ID: x.ID, State: string(x.State), Owner: x.Owner, Title: x.Title, File: x.Path}
}
