package gitremote

import (
	"strings"
	"testing"
)

func TestPeerHosts(t *testing.T) {
	seen := map[string]peerSeen{"ann": {Commit: "a1"}, "bob": {Commit: "b1"}, "cat": {Commit: "c1"}, "dan": {Commit: "d1"}}
	out := strings.Join([]string{
		"a1\x00pickup: heartbeat ann 2026-11-27T10:00:00Z on build-7",
		"b1\x00pickup: heartbeat bob 2026-11-27T10:00:00Z",              // an older pickup: no host
		"c1\x00pickup: heartbeat eve 2026-11-27T10:00:00Z on elsewhere", // not cat's own
		"",
	}, "\n")
	got := peerHosts(seen, out) // dan's commit is gone: no line
	if len(got) != 1 || got["ann"] != "build-7" {
		t.Errorf("peerHosts = %v, want only ann on build-7", got)
	}
}
