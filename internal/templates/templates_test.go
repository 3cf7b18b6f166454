package templates

import (
	"strings"
	"testing"
)

func TestAgentsSnippet(t *testing.T) {
	s := Agents()
	if !strings.HasPrefix(s, "## ") || !strings.HasSuffix(s, "\n") || strings.HasSuffix(s, "\n\n") {
		t.Errorf("the snippet should be one markdown section ending in one newline")
	}
	for _, want := range []string{"pickup next", "pickup claim ID", "pickup done ID", "pickup release --all", "by hand", "$CODEX_THREAD_ID",
		// consistent with the hooks: release at exit only without them
		"Without those hooks", "SessionEnd hook gives back",
		// every exit code, and never force a lock
		"0 done", "2 no board", "3 held", "4 no such", "5 timed out", "6 your claim was lost", "7 two copies", "force a lock"} {
		if !strings.Contains(s, want) {
			t.Errorf("the snippet does not mention %q", want)
		}
	}
}
