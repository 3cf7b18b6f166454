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
	for _, want := range []string{"pickup next", "pickup claim ID", "pickup done ID", "pickup release --all", "Exit 6", "by hand", "$CODEX_THREAD_ID"} {
		if !strings.Contains(s, want) {
			t.Errorf("the snippet does not mention %q", want)
		}
	}
}
