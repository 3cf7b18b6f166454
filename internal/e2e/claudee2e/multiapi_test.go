package claudee2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
)

// multiAPI stands in for the Messages API for several Claude Code
// conversations at once (the processes that `pickup work -j N` starts):
// each conversation, told apart by the X-Claude-Code-Session-Id header the
// CLI sends, follows its own copy of the script, made by script when its
// first request arrives.
type multiAPI struct {
	t      *testing.T
	name   string
	srv    *httptest.Server
	script func(conv string) []step

	mu    sync.Mutex
	convs map[string]*stubAPI
	order []string
}

func newMultiAPI(t *testing.T, name string, script func(conv string) []step) *multiAPI {
	m := &multiAPI{t: t, name: name, script: script, convs: map[string]*stubAPI{}}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(func() {
		m.srv.Close()
		if t.Failed() {
			m.mu.Lock()
			defer m.mu.Unlock()
			for _, id := range m.order {
				a := m.convs[id]
				t.Logf("stand-in API %q, conversation %s, saw %d requests:\n  %s", m.name, id, len(a.log), strings.Join(a.log, "\n  "))
			}
		}
	})
	return m
}

func (m *multiAPI) URL() string { return m.srv.URL }

func (m *multiAPI) serve(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("X-Claude-Code-Session-Id")
	m.mu.Lock()
	a, ok := m.convs[id]
	if !ok {
		a = &stubAPI{t: m.t, name: fmt.Sprintf("%s-%d", m.name, len(m.order)+1), steps: m.script(id)}
		m.convs[id] = a
		m.order = append(m.order, id)
	}
	m.mu.Unlock()
	a.serve(w, r)
}

// Conversations returns the conversations that asked for steps (not
// only side requests), by session id.
func (m *multiAPI) Conversations() map[string]*stubAPI {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]*stubAPI{}
	for id, a := range m.convs {
		if len(a.Texts()) > 0 {
			out[id] = a
		}
	}
	return out
}

func (m *multiAPI) requireScriptFollowed(t *testing.T) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range m.order {
		if errs := m.convs[id].Errors(); len(errs) > 0 {
			t.Fatalf("conversation %s did not follow the script of %s: %v", id, m.name, errs)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
