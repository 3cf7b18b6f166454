package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// envPrintInvokers makes the test binary print its invokers and exit, for
// TestInvokersReal.
const envPrintInvokers = "PROC_TEST_PRINT_INVOKERS"

func TestMain(m *testing.M) {
	if os.Getenv(envPrintInvokers) == "1" {
		var names []string
		for _, p := range (Env{}).Invokers() {
			name := filepath.Base(p.Exe)
			if name != "bash" {
				name += "@" + strconv.Itoa(p.PID)
			}
			names = append(names, name)
		}
		fmt.Println(strings.Join(names, " "))
		os.Exit(0)
	}
	os.Exit(m.Run())
}
