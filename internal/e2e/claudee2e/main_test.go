package claudee2e

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/pickup-dev/pickup/internal/testbin"
)

// tmpRoot holds what outlives one test: the pickup binary.
var tmpRoot string

func TestMain(m *testing.M) { os.Exit(testbin.Main(m, "claudee2e-", &tmpRoot)) }

var build testbin.Once

// pickupBinary builds the real pickup once, without -race: Claude Code runs
// it from its hooks on every tool call.
func pickupBinary(t *testing.T) string {
	t.Helper()
	return build.Path(t, tmpRoot)
}

// claudeVersion is the Claude Code release these tests are written
// against; scripts/test installs exactly this one.
const claudeVersion = "2.1.331"

var cli struct {
	once sync.Once
	exe  string
	err  error
}

// claudeBinary returns the Claude Code CLI named by $PICKUP_CLAUDE_BIN. A
// missing CLI fails the test: the integration is only known to work when
// these tests ran. PICKUP_SKIP_CLAUDE_E2E=1 skips them on purpose.
func claudeBinary(t *testing.T) string {
	t.Helper()
	if os.Getenv("PICKUP_SKIP_CLAUDE_E2E") == "1" {
		t.Skip("PICKUP_SKIP_CLAUDE_E2E=1: the Claude Code end-to-end tests are skipped on purpose")
	}
	cli.once.Do(func() {
		exe := os.Getenv("PICKUP_CLAUDE_BIN")
		if exe == "" {
			cli.err = fmt.Errorf("PICKUP_CLAUDE_BIN is not set: these tests run the real Claude Code CLI %s; "+
				"install it with `scripts/install-claude-code` (scripts/test does) and set "+
				"PICKUP_CLAUDE_BIN=$(scripts/install-claude-code), or set PICKUP_SKIP_CLAUDE_E2E=1 to skip them on purpose", claudeVersion)
			return
		}
		out, err := exec.Command(exe, "--version").CombinedOutput()
		if err != nil {
			cli.err = fmt.Errorf("%s --version: %v\n%s", exe, err, out)
			return
		}
		if !strings.HasPrefix(strings.TrimSpace(string(out)), claudeVersion+" ") {
			cli.err = fmt.Errorf("%s is Claude Code %q; these tests are written against %s (scripts/install-claude-code installs it)",
				exe, strings.TrimSpace(string(out)), claudeVersion)
			return
		}
		cli.exe = exe
	})
	if cli.err != nil {
		t.Fatal(cli.err)
	}
	return cli.exe
}
