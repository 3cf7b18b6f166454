package main

import (
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/pickup-dev/pickup/internal/boardview"
	"github.com/pickup-dev/pickup/sessions"
)

//go:embed static
var static embed.FS

func templates() *template.Template {
	return template.Must(template.New("").ParseFS(static, "static/*.html"))
}

// server answers the page, its stream, the session pages and the actions.
type server struct {
	hub     *hub
	guard   *guard
	tmpl    *template.Template
	actions *actions // nil unless --actions
	dir     string
}

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	assets, _ := fs.Sub(static, "static")
	files := http.FileServerFS(assets)
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /events", s.events)
	mux.HandleFunc("GET /board", s.board)
	mux.HandleFunc("GET /s/{id}", s.session)
	mux.HandleFunc("GET /static/{file}", func(w http.ResponseWriter, r *http.Request) {
		if f := r.PathValue("file"); f != "app.js" && f != "style.css" {
			http.NotFound(w, r)
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/" + r.PathValue("file")
		files.ServeHTTP(w, r2)
	})
	mux.HandleFunc("/api/{action}", s.act)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secure(w)
		write := strings.HasPrefix(r.URL.Path, "/api/")
		// The token in the address: kept as a cookie of this port, and the
		// page opened again without it.
		if t := r.URL.Query().Get("token"); t != "" && r.Method == http.MethodGet && r.URL.Path == "/" {
			if no := s.guard.check(r, false); no != nil && no.status != http.StatusUnauthorized {
				refuse(w, no)
				return
			}
			if !s.guard.same(t) {
				refuse(w, &refusal{http.StatusUnauthorized, "that token is not this server's (it is printed when pickup serve starts)"})
				return
			}
			http.SetCookie(w, &http.Cookie{Name: s.guard.cookie, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			q := r.URL.Query()
			q.Del("token")
			u := url.URL{Path: "/", RawQuery: q.Encode()}
			http.Redirect(w, r, u.String(), http.StatusSeeOther)
			return
		}
		if no := s.guard.check(r, write); no != nil {
			refuse(w, no)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func refuse(w http.ResponseWriter, no *refusal) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(no.status)
	_, _ = w.Write([]byte("pickup serve: refused: " + no.why + "\n"))
}

func (s *server) page(w http.ResponseWriter, r *http.Request) {
	// The hub's newest rendering, with its version: the page's stream
	// (or the page leading its browser's) sends the changes from it.
	board, version := s.hub.board()
	if version == 0 {
		http.Error(w, "pickup serve: the board is not rendered yet: reload", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = s.tmpl.ExecuteTemplate(w, "page", map[string]any{
		"Dir": boardview.Clean(s.dir), "Actions": s.actions != nil, "Version": version,
		// Rendered by the board template: every byte of the board in
		// it is escaped.
		"Board": template.HTML(board),
	})
}

// board answers the board's newest rendering alone, its version in the
// header X-Pickup-Version: for a page whose browser's shared stream went
// on while it was hidden, or that opened after a change.
func (s *server) board(w http.ResponseWriter, r *http.Request) {
	board, version := s.hub.board()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("X-Pickup-Version", strconv.FormatUint(version, 10))
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(board)
}

// events streams the board: the whole current rendering at once, then
// each next one as a patch of what changed (see patch.go), or whole when
// the page missed one (too slow to read: it skips to the newest). The
// stream sends nothing while the board does not change.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "pickup serve: streaming unsupported", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	wake := s.hub.subscribe()
	defer s.hub.unsubscribe(wake)
	// retry: how soon the page's EventSource reconnects after a drop.
	if _, err := w.Write([]byte("retry: 1000\n\n")); err != nil {
		return
	}
	var sent uint64
	for {
		frame, patch, v := s.hub.current()
		if v != sent {
			if patch != nil && sent != 0 && sent+1 == v {
				frame = patch
			}
			if _, err := w.Write(frame); err != nil {
				return
			}
			flusher.Flush()
			sent = v
		}
		select {
		case <-r.Context().Done():
			return
		case <-wake:
		}
	}
}

type metaRow struct{ K, V string }

// session shows one session's file (its frontmatter as a table, its body
// as markdown, every byte escaped) and its history.
func (s *server) session(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := sessions.ValidateID(id); err != nil {
		http.Error(w, "pickup serve: "+err.Error(), http.StatusNotFound)
		return
	}
	d := s.hub.feed.Read(id)
	data := map[string]any{"ID": boardview.Clean(id), "Err": boardview.Clean(d.Err)}
	head, body := splitFrontmatter(d.Text)
	var meta []metaRow
	for _, line := range strings.Split(head, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) != "" {
			meta = append(meta, metaRow{boardview.Clean(strings.TrimSpace(k)), boardview.Clean(strings.TrimSpace(v))})
		} else if strings.TrimSpace(line) != "" && len(meta) > 0 {
			meta[len(meta)-1].V += " " + boardview.Clean(strings.TrimSpace(line))
		}
	}
	data["Meta"] = meta
	data["Body"] = markdown(boardview.CleanText(body))
	var hist []eventView
	for _, e := range d.History {
		hist = append(hist, eventView{Clock: e.Time.Local().Format("2006-01-02 15:04:05"), Op: boardview.Clean(e.Op), From: boardview.Clean(e.From),
			To: boardview.Clean(e.To), Owner: boardview.Clean(e.Owner), Why: boardview.Clean(e.Reason)})
	}
	data["History"] = hist
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if d.Err != "" && d.Text == "" {
		w.WriteHeader(http.StatusNotFound)
	}
	_ = s.tmpl.ExecuteTemplate(w, "session", data)
}
