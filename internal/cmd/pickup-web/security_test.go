package main

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// boardFiles is every session file of the board and the event log's
// size: what an action would move.
func boardFiles(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	for _, st := range []string{"todo", "doing", "done", "failed"} {
		_ = filepath.WalkDir(filepath.Join(dir, st), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(dir, p)
				data, _ := os.ReadFile(p)
				out = append(out, rel+" "+string(data))
			}
			return nil
		})
	}
	sort.Strings(out)
	if info, err := os.Stat(filepath.Join(dir, sessions.EventLogFile)); err == nil {
		out = append(out, "events.log "+info.ModTime().String())
	}
	return strings.Join(out, "\n")
}

type call struct {
	method, path string
	host, origin string
	bearer       string
	cookie       *http.Cookie
	form         url.Values
}

func (s *webServer) send(t *testing.T, c call) (int, string) {
	t.Helper()
	var body io.Reader
	if c.form != nil {
		body = strings.NewReader(c.form.Encode())
	}
	req, err := http.NewRequest(c.method, s.Base+c.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if c.form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if c.host != "" {
		req.Host = c.host
	}
	if c.origin != "" {
		req.Header.Set("Origin", c.origin)
	}
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	if c.cookie != nil {
		req.AddCookie(c.cookie)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// TestRefusals: another Host (DNS rebinding), a foreign Origin, no token,
// the token of another board: each refused, and nothing moved. The same
// action with everything right goes through and is recorded with the
// person's name.
func TestRefusals(t *testing.T) {
	dir, b := newBoard(t)
	if _, err := b.Create(sessions.Meta{Title: "waits"}, nil); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, dir, "--actions")
	if srv.Token == "" {
		t.Fatalf("--actions printed no token: %s", srv.URL)
	}
	otherDir, _ := newBoard(t)
	other := startServer(t, otherDir, "--actions")
	self := "http://" + srv.Host
	newSession := url.Values{"by": {"mallory"}, "title": {"planted"}}
	cookie := func(s *webServer, token string) *http.Cookie {
		return &http.Cookie{Name: "pickup_token_" + s.Host[strings.LastIndexByte(s.Host, ':')+1:], Value: token}
	}
	refused := []struct {
		name   string
		c      call
		status int
	}{
		{"another Host", call{method: "POST", path: "/api/new", host: "evil.example:" + srv.Host[strings.LastIndexByte(srv.Host, ':')+1:], origin: "http://evil.example", bearer: srv.Token, form: newSession}, http.StatusMisdirectedRequest},
		{"another Host, read", call{method: "GET", path: "/", host: "rebound.example:80"}, http.StatusMisdirectedRequest},
		{"a foreign Origin", call{method: "POST", path: "/api/new", origin: "http://evil.example", bearer: srv.Token, form: newSession}, http.StatusForbidden},
		{"a foreign Origin, stream", call{method: "GET", path: "/events", origin: "http://evil.example"}, http.StatusForbidden},
		{"a foreign Origin, the board alone", call{method: "GET", path: "/board", origin: "http://evil.example"}, http.StatusForbidden},
		{"another Host, the board alone", call{method: "GET", path: "/board", host: "rebound.example:80"}, http.StatusMisdirectedRequest},
		{"no token", call{method: "POST", path: "/api/new", origin: self, form: newSession}, http.StatusUnauthorized},
		{"the token of another board, cookie", call{method: "POST", path: "/api/new", origin: self, cookie: cookie(srv, other.Token), form: newSession}, http.StatusUnauthorized},
		{"the token of another board, bearer", call{method: "POST", path: "/api/new", bearer: other.Token, form: newSession}, http.StatusForbidden},
		{"the token of another board, bearer and Origin", call{method: "POST", path: "/api/new", origin: self, bearer: other.Token, form: newSession}, http.StatusUnauthorized},
		{"the token of another board, address", call{method: "GET", path: "/?token=" + other.Token}, http.StatusUnauthorized},
		{"an action without Origin or bearer", call{method: "POST", path: "/api/new", cookie: cookie(srv, srv.Token), form: newSession}, http.StatusForbidden},
		{"an action as GET", call{method: "GET", path: "/api/new?by=x&title=y", bearer: srv.Token}, http.StatusMethodNotAllowed},
	}
	before := boardFiles(t, dir)
	for _, r := range refused {
		status, body := srv.send(t, r.c)
		if status != r.status || !strings.Contains(body, "refused") {
			t.Errorf("%s: %d %.200q, want %d and a refusal", r.name, status, body, r.status)
		}
		if after := boardFiles(t, dir); after != before {
			t.Fatalf("%s: the board moved:\n%s\nwas\n%s", r.name, after, before)
		}
	}

	// A live owner's claims are never given back.
	holder := exec.Command("sleep", "600")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	p, err := proc.Env{}.Lookup(holder.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&claim.Leases{Board: b}).Heartbeat("agent-1", claim.Holder(p)); err != nil {
		t.Fatal(err)
	}
	c, _ := claim.New(b, "agent-1")
	if _, err := c.Claim(context.Background(), findTitle(t, b, "waits")); err != nil {
		t.Fatal(err)
	}
	before = boardFiles(t, dir)
	if status, body := srv.send(t, call{method: "POST", path: "/api/reap", origin: self, bearer: srv.Token, form: url.Values{"by": {"ana"}, "owner": {"agent-1"}}}); status != http.StatusConflict {
		t.Errorf("giving back a live owner's sessions: %d %q, want 409", status, body)
	}
	if after := boardFiles(t, dir); after != before {
		t.Fatalf("giving back a live owner's sessions moved the board:\n%s", after)
	}
	// Dead, they come back, recorded with the person's name.
	_ = holder.Process.Kill()
	_ = holder.Wait()
	if status, body := srv.send(t, call{method: "POST", path: "/api/reap", origin: self, bearer: srv.Token, form: url.Values{"by": {"ana"}, "owner": {"agent-1"}}}); status != http.StatusOK {
		t.Fatalf("giving back a dead owner's sessions: %d %q", status, body)
	}
	// Everything right: the page's own origin and the token's cookie.
	status, body := srv.send(t, call{method: "POST", path: "/api/new", origin: self, cookie: cookie(srv, srv.Token), form: url.Values{"by": {"Ana Lopez"}, "title": {"from the page"}, "priority": {"high"}}})
	if status != http.StatusOK || !strings.HasPrefix(body, "made ") {
		t.Fatalf("a right action: %d %q", status, body)
	}
	id := strings.TrimSpace(strings.TrimPrefix(body, "made "))
	if status, body := srv.send(t, call{method: "POST", path: "/api/priority", origin: self, bearer: srv.Token, form: url.Values{"by": {"ana"}, "id": {id}, "priority": {"low"}}}); status != http.StatusOK {
		t.Fatalf("priority: %d %q", status, body)
	}
	events, _, err := b.Events(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[0].Op != "new" || events[0].Owner != "Ana-Lopez" || events[1].Op != "priority" || events[1].Owner != "ana" {
		t.Errorf("the history of %s: %+v, want new by Ana-Lopez then priority by ana", id, events)
	}
	list, _ := b.List(sessions.Todo)
	for _, s := range list {
		if s.ID == id && s.Priority != sessions.Low {
			t.Errorf("%s is %s, want low", id, s.Priority)
		}
	}
	reaps, _, _ := b.Events(findTitle(t, b, "waits"))
	if last := reaps[len(reaps)-1]; last.Op != "reap" || !strings.Contains(last.Reason, "given back by ana") {
		t.Errorf("the reap is recorded as %+v, want one given back by ana", last)
	}

	// A read-only server refuses every action.
	ro := startServer(t, dir)
	before = boardFiles(t, dir)
	if status, _ := ro.send(t, call{method: "POST", path: "/api/new", origin: "http://" + ro.Host, form: newSession}); status < 400 {
		t.Errorf("a read-only server took an action: %d", status)
	}
	if after := boardFiles(t, dir); after != before {
		t.Fatalf("a read-only server moved the board")
	}
}

// TestBeyondLoopback: an address beyond loopback without a token refuses
// to start; with one, every request needs it.
func TestBeyondLoopback(t *testing.T) {
	dir, _ := newBoard(t)
	cmd := exec.Command(webBinary(t), "--dir", dir, "--addr", "0.0.0.0:0")
	cmd.Env = append(os.Environ(), "PICKUP_WEB_TOKEN=")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "needs a token") {
		t.Fatalf("--addr 0.0.0.0:0 without a token: %v\n%s", err, out)
	}
	token := "0123456789abcdef0123"
	srv := startServerAt(t, dir, "0.0.0.0:0", "PICKUP_WEB_TOKEN="+token)
	port := srv.Host[strings.LastIndexByte(srv.Host, ':')+1:]
	srv.Base = "http://127.0.0.1:" + port
	if status, _ := srv.send(t, call{method: "GET", path: "/"}); status != http.StatusUnauthorized {
		t.Errorf("a read without the token: %d, want 401", status)
	}
	if status, _ := srv.send(t, call{method: "GET", path: "/", bearer: token}); status != http.StatusOK {
		t.Errorf("a read with the token: %d, want 200", status)
	}
	status, _ := srv.send(t, call{method: "GET", path: "/?token=" + token})
	if status != http.StatusSeeOther {
		t.Errorf("the printed address: %d, want a redirect that keeps the token as a cookie", status)
	}
}
