package sharedways

import (
	"encoding/json"
	"strings"
	"testing"
)

type event struct {
	ID    string `json:"id"`
	Op    string `json:"op"`
	From  string `json:"from"`
	To    string `json:"to"`
	Owner string `json:"owner"`
}

func parseEvents(t testing.TB, log string) []event {
	t.Helper()
	var out []event
	for _, l := range strings.Split(log, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var e event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("events.log line %q: %v", l, err)
		}
		out = append(out, e)
	}
	return out
}

// countOps counts, per session, the events of each op ("claim" counts
// next too).
func countOps(events []event) map[string]map[string]int {
	m := map[string]map[string]int{}
	for _, e := range events {
		op := e.Op
		if op == "next" {
			op = "claim"
		}
		if m[e.ID] == nil {
			m[e.ID] = map[string]int{}
		}
		m[e.ID][op]++
	}
	return m
}
