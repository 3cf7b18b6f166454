package cli

import (
	"os"
	"testing"

	"github.com/pickup-dev/pickup/internal/roles"
)

// TestMain runs the hidden roles first: the commands these tests run
// in-process start this test binary again as a watchdog or a gate, and git
// starts it as its proxy (see internal/roles).
func TestMain(m *testing.M) {
	if code, ok := roles.Run(os.Args); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
