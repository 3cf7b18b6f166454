package agentse2e

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

func TestMain(m *testing.M) { os.Exit(testbin.Main(m, "agentse2e-", &tmpRoot)) }

var build testbin.Once

// pickupBinary builds the real pickup once, without -race: the agents run
// it from their hooks on every tool call.
func pickupBinary(t *testing.T) string {
	t.Helper()
	return build.Path(t, tmpRoot)
}

// The releases these tests are written against; scripts/install-agent-clis
// installs exactly these.
const (
	codexVersion  = "0.171.0"
	geminiVersion = "0.61.0"
)

type cliCheck struct {
	once sync.Once
	exe  string
	err  error
}

var clis = map[string]*cliCheck{"codex": {}, "gemini": {}}

// agentBinary returns the CLI of kind ("codex", "gemini") that
// $PICKUP_CODEX_BIN or $PICKUP_GEMINI_BIN names, after checking its
// version. A missing CLI fails the test: the setup is only known to work
// when these tests ran. PICKUP_SKIP_CODEX_E2E=1 (GEMINI) skips on purpose.
func agentBinary(t *testing.T, kind string) string {
	t.Helper()
	upper := strings.ToUpper(kind)
	if os.Getenv("PICKUP_SKIP_"+upper+"_E2E") == "1" {
		t.Skipf("PICKUP_SKIP_%s_E2E=1: the %s end-to-end tests are skipped on purpose", upper, kind)
	}
	want := map[string]string{"codex": "codex-cli " + codexVersion, "gemini": geminiVersion}[kind]
	c := clis[kind]
	c.once.Do(func() {
		exe := os.Getenv("PICKUP_" + upper + "_BIN")
		if exe == "" {
			c.err = fmt.Errorf("PICKUP_%s_BIN is not set: these tests run the real %s CLI (%s); install it with "+
				"`scripts/install-agent-clis` (scripts/test does) and set the variable it prints, or set PICKUP_SKIP_%s_E2E=1 to skip them on purpose",
				upper, kind, want, upper)
			return
		}
		out, err := exec.Command(exe, "--version").CombinedOutput()
		if err != nil {
			c.err = fmt.Errorf("%s --version: %v\n%s", exe, err, out)
			return
		}
		if got := strings.TrimSpace(string(out)); got != want {
			c.err = fmt.Errorf("%s is %q; these tests are written against %q (scripts/install-agent-clis installs it)", exe, got, want)
			return
		}
		c.exe = exe
	})
	if c.err != nil {
		t.Fatal(c.err)
	}
	return c.exe
}
