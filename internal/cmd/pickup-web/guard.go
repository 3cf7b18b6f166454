package main

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// guard decides who may talk to the server. Every request must name one
// of the server's own addresses as its Host (a page of another site that
// rebinds its name to 127.0.0.1 is refused), must not come from another
// origin (Origin, Sec-Fetch-Site), and, when the server listens beyond
// loopback, must carry the token. Actions always need the token.
type guard struct {
	hosts     map[string]bool // host:port names the server answers to
	token     string          // "" when none is needed (loopback, read-only)
	readToken bool            // reads need the token too (not loopback)
	cookie    string          // the token cookie's name (one per port: cookies ignore ports)
}

func newToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// isLoopback reports whether host (an IP or a name) is loopback only.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ownHosts is every host:port the server at addr (as bound) answers to:
// the address itself, localhost for a loopback one, and for an
// unspecified one (0.0.0.0, ::) this machine's addresses and name; extra
// are the names given with --host (a name in DNS that points here).
func ownHosts(addr *net.TCPAddr, extra []string) map[string]bool {
	port := strconv.Itoa(addr.Port)
	hosts := map[string]bool{}
	add := func(h string) {
		h = strings.ToLower(strings.Trim(h, "[]"))
		if h == "" {
			return
		}
		hp := net.JoinHostPort(h, port)
		hosts[hp] = true
		if port == "80" {
			hosts[h] = true
			if strings.Contains(h, ":") {
				hosts["["+h+"]"] = true
			}
		}
	}
	ip := addr.IP
	switch {
	case ip.IsUnspecified():
		if ifaces, err := net.InterfaceAddrs(); err == nil {
			for _, a := range ifaces {
				if n, ok := a.(*net.IPNet); ok {
					add(n.IP.String())
				}
			}
		}
		if name, err := os.Hostname(); err == nil {
			add(name)
		}
		add("localhost")
	case ip.IsLoopback():
		add(ip.String())
		add("localhost")
	default:
		add(ip.String())
	}
	for _, h := range extra {
		add(h)
	}
	return hosts
}

// refusal is why a request was refused, and its status.
type refusal struct {
	status int
	why    string
}

// check returns why r is refused, or nil. write: it would change the
// board (an action).
func (g *guard) check(r *http.Request, write bool) *refusal {
	host := strings.ToLower(r.Host)
	if !g.hosts[host] {
		return &refusal{http.StatusMisdirectedRequest, "Host " + strconv.Quote(r.Host) + " is not this server's address (pickup serve answers only to its own address; give --host NAME to add a name)"}
	}
	if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
		return &refusal{http.StatusForbidden, "a request from another origin (" + strconv.Quote(o) + ")"}
	}
	site := r.Header.Get("Sec-Fetch-Site")
	if site != "" && site != "same-origin" && site != "none" && !(r.Method == http.MethodGet && r.Header.Get("Sec-Fetch-Mode") == "navigate" && !write) {
		return &refusal{http.StatusForbidden, "a cross-site request (Sec-Fetch-Site: " + site + ")"}
	}
	if write {
		if r.Method != http.MethodPost {
			return &refusal{http.StatusMethodNotAllowed, "an action must be a POST"}
		}
		if r.Header.Get("Origin") == "" && !g.bearer(r) {
			return &refusal{http.StatusForbidden, "an action without Origin (send Authorization: Bearer TOKEN from a script)"}
		}
	}
	if (write || g.readToken) && !g.tokenOK(r) {
		return &refusal{http.StatusUnauthorized, "no valid token (open the address pickup serve printed, with its ?token=)"}
	}
	return nil
}

func (g *guard) same(s string) bool {
	return g.token != "" && subtle.ConstantTimeCompare([]byte(s), []byte(g.token)) == 1
}

func (g *guard) bearer(r *http.Request) bool {
	t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && g.same(t)
}

func (g *guard) tokenOK(r *http.Request) bool {
	if g.bearer(r) {
		return true
	}
	c, err := r.Cookie(g.cookie)
	return err == nil && g.same(c.Value)
}

// secure sets the headers of every answer: a strict CSP (only the
// server's own script and style; no inline script, no frames, no other
// origin), no sniffing, no referrer (the token never leaves in one).
func secure(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}
