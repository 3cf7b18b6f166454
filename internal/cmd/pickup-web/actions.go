package main

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/boardview"
	"github.com/pickup-dev/pickup/internal/claimhook"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// actions changes the board for a person on the page (pickup serve
// --actions), each through the library calls the CLI makes: reap's
// claim.Leases.Reap (which judges the owner again under its guard, so a
// live owner's claims are never taken), requeue's Client.Requeue, new's
// Board.CreateAs, and Client.SetPriority. Each is recorded in the history
// with the person's name: as the transition's owner, or in the reap's
// reason.
//
// On a shared board (a git remote, a PostgreSQL database) the client is
// made with claim.New, which attaches the board's arbiter: each action is
// a transition that stands only once the arbiter took it, exactly as the
// CLI's, and one refused there moves nothing. Before a reap, requeue or
// priority change the board is brought in line with the arbiter
// (Client.Ready), so that an owner on another machine is judged by its
// latest heartbeats, as `pickup reap` judges it.
type actions struct {
	// mu: one action at a time. The client's Owner is the name of the
	// person acting, set for each action; people act rarely.
	mu    sync.Mutex
	b     *sessions.Board
	c     *claim.Client
	stale time.Duration
}

// serveOwner names the actions' client until a person acts (claim.New
// needs an owner; nothing is ever claimed under it).
const serveOwner = "pickup-serve"

func openActions(dir string) (*actions, error) {
	b, err := sessions.Open(dir)
	if err != nil {
		return nil, err
	}
	cfg, err := b.Config()
	if err != nil {
		return nil, err
	}
	c, err := claim.New(b, serveOwner) // attaches a shared board's arbiter
	if err != nil {
		return nil, fmt.Errorf("open board %s for actions: %w", b.Dir, err)
	}
	a := &actions{b: b, c: c, stale: claim.DefaultStale}
	if cfg.Stale > 0 {
		a.stale = cfg.Stale
	}
	return a, nil
}

// Close releases the arbiter (a database connection, its helper).
func (a *actions) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.c.Close()
}

// person is the name the page sent, as an owner name of the history.
func person(r *http.Request) (string, error) {
	by := strings.TrimSpace(r.PostFormValue("by"))
	if by == "" {
		return "", errors.New("give your name: it is recorded in the history")
	}
	return sessions.SanitizeOwner(by), nil
}

func (s *server) act(w http.ResponseWriter, r *http.Request) {
	if s.actions == nil {
		http.Error(w, "pickup serve: refused: this board is read-only (start pickup serve with --actions to act on it)", http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "pickup serve: "+err.Error(), http.StatusBadRequest)
		return
	}
	by, err := person(r)
	if err != nil {
		http.Error(w, "pickup serve: "+err.Error(), http.StatusBadRequest)
		return
	}
	msg, status, err := s.actions.do(r.PathValue("action"), by, r)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if err != nil {
		w.WriteHeader(status)
		fmt.Fprintf(w, "pickup serve: %s\n", boardview.Clean(err.Error()))
		return
	}
	fmt.Fprintf(w, "%s\n", boardview.Clean(msg))
}

func (a *actions) do(action, by string, r *http.Request) (string, int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.c.Owner = by
	defer func() { a.c.Owner = serveOwner }()
	id := strings.TrimSpace(r.PostFormValue("id"))
	switch action {
	case "reap":
		owner := strings.TrimSpace(r.PostFormValue("owner"))
		if err := sessions.ValidateOwner(owner); err != nil {
			return "", http.StatusBadRequest, err
		}
		// The owners' heartbeats from other machines, and where the
		// arbiter has their sessions, before they are judged.
		if err := a.c.Ready(r.Context()); err != nil {
			return "", http.StatusServiceUnavailable, fmt.Errorf("give back %s's sessions: %w", owner, err)
		}
		l := &claim.Leases{Board: a.b, Now: time.Now}
		claimhook.UseSystem(l, proc.Env{}.Memoized())
		reaped, err := l.Reap(claim.ReapOptions{Stale: a.stale, Only: owner, By: by})
		if err != nil {
			return "", http.StatusInternalServerError, fmt.Errorf("give back %s's sessions: %w", owner, err)
		}
		var ids, failed []string
		for _, x := range reaped {
			if x.Err == "" {
				ids = append(ids, x.ID)
			} else {
				failed = append(failed, x.ID+": "+x.Err)
			}
		}
		if len(ids) == 0 {
			if len(failed) > 0 {
				return "", http.StatusConflict, fmt.Errorf("nothing given back from %s: %s", owner, strings.Join(failed, "; "))
			}
			return "", http.StatusConflict, fmt.Errorf("nothing given back: %s is not dead or stale now, or holds nothing", owner)
		}
		return fmt.Sprintf("gave back %s from %s", strings.Join(ids, ", "), owner), 0, nil
	case "requeue":
		if err := sessions.ValidateOwner(by); err != nil {
			return "", http.StatusBadRequest, err
		}
		if err := a.c.Ready(r.Context()); err != nil {
			return "", http.StatusServiceUnavailable, fmt.Errorf("requeue %s: %w", id, err)
		}
		if _, err := a.c.Requeue(r.Context(), id); err != nil {
			return "", statusOf(err), err
		}
		return "requeued " + id, 0, nil
	case "priority":
		p, err := sessions.ParsePriority(r.PostFormValue("priority"))
		if err != nil {
			return "", http.StatusBadRequest, err
		}
		if err := sessions.ValidateOwner(by); err != nil {
			return "", http.StatusBadRequest, err
		}
		// SetPriority brings the board in line with the arbiter itself.
		if _, err := a.c.SetPriority(r.Context(), id, p); err != nil {
			return "", statusOf(err), err
		}
		return fmt.Sprintf("%s is now %s", id, p), 0, nil
	case "new":
		title := strings.TrimSpace(r.PostFormValue("title"))
		if title == "" {
			return "", http.StatusBadRequest, errors.New("a new session needs a title")
		}
		p, err := sessions.ParsePriority(r.PostFormValue("priority"))
		if err != nil {
			return "", http.StatusBadRequest, err
		}
		m := sessions.Meta{Title: title, Priority: p}
		for _, t := range strings.Split(r.PostFormValue("tags"), ",") {
			if t = strings.TrimSpace(t); t != "" {
				m.Tags = append(m.Tags, t)
			}
		}
		body := strings.ReplaceAll(r.PostFormValue("body"), "\r\n", "\n")
		s, err := a.b.CreateAs(by, m, []byte(body))
		if err != nil {
			return "", http.StatusInternalServerError, err
		}
		return "made " + s.ID, 0, nil
	}
	return "", http.StatusNotFound, fmt.Errorf("no action %q (reap, requeue, priority, new)", action)
}

// statusOf is the HTTP status of a transition's failure.
func statusOf(err error) int {
	switch {
	case errors.Is(err, claim.ErrSessionNotFound):
		return http.StatusNotFound
	case errors.Is(err, claim.ErrSessionNotAvailable):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}
