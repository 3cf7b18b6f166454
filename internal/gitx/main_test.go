package gitx

import (
	"os"
	"testing"
)

// TestMain relays when git runs this test binary as its core.gitProxy (the
// relay tests name it so), as pickup's main does through internal/roles.
func TestMain(m *testing.M) {
	if code, ok := RunProxy(os.Args, os.Getenv); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
