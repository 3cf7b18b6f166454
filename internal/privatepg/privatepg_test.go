package privatepg

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestServerStopsWhenOwnerDies: a process that started a server and was
// SIGKILLed (as go test's -timeout does) leaves no server running.
func TestServerStopsWhenOwnerDies(t *testing.T) {
	if dir := os.Getenv("PRIVATEPG_CHILD_DIR"); dir != "" {
		// The child: start a server, say its folder, then wait to be killed.
		if _, err := Start(dir, Options{NoFsync: true}); err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString("started\n")
		time.Sleep(5 * time.Minute)
		return
	}
	if _, err := os.Stat(filepath.Join(BinDir(), "initdb")); err != nil {
		t.Skip("PostgreSQL is not installed (scripts/test installs it)")
	}
	dir := filepath.Join(t.TempDir(), "pg")
	child := exec.Command(os.Args[0], "-test.run=^TestServerStopsWhenOwnerDies$", "-test.timeout=5m")
	child.Env = append(os.Environ(), "PRIVATEPG_CHILD_DIR="+dir)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	if !strings.Contains(string(buf[:n]), "started") {
		_ = child.Process.Kill()
		t.Fatalf("the child did not start a server: %q", buf[:n])
	}
	pidFile := filepath.Join(dir, "data", "postmaster.pid")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	serverPid, _ := strconv.Atoi(strings.SplitN(string(data), "\n", 2)[0])
	if serverPid <= 0 {
		t.Fatalf("no server pid in %s", pidFile)
	}
	_ = child.Process.Kill()
	_ = child.Wait()
	deadline := time.Now().Add(60 * time.Second)
	for alive(serverPid) {
		if time.Now().After(deadline) {
			_ = exec.Command("kill", "-9", strconv.Itoa(serverPid)).Run()
			t.Fatalf("the server (pid %d) still runs 60 s after the process that started it was killed", serverPid)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func alive(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}
