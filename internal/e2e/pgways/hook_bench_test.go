package pgways

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkHookOnPostgresBoard: the cost of the Claude Code
// post-tool-use hook as a process on a PostgreSQL board, against an empty
// Go program in the same run: throttled (one stat), renewing the lease
// without a heartbeat due, and renewing it with one due (it then starts
// the detached `pickup shared-beat`, which it does not wait for); and
// that shared-beat as a process (what the hook would cost inline).
//
//	go test -run '^$' -bench HookOnPostgresBoard ./internal/e2e/pgways/
func BenchmarkHookOnPostgresBoard(b *testing.B) {
	_, url := newDatabase(b)
	c := clones(b, url, 1)[0]
	empty := filepath.Join(b.TempDir(), "empty")
	if err := os.WriteFile(empty+".go", []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if out, err := exec.Command("go", "build", "-o", empty, empty+".go").CombinedOutput(); err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	agent := exec.Command("sleep", "300")
	if err := agent.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = agent.Process.Kill(); _ = agent.Wait() }()
	const owner = "hooked"
	input := fmt.Sprintf(`{"session_id":%q,"cwd":%q}`, owner, filepath.Dir(c.dir))
	run := func(b *testing.B, name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Dir = filepath.Dir(c.dir)
		cmd.Env = append(env(c.home), fmt.Sprintf("PICKUP_PID=%d", agent.Process.Pid))
		cmd.Stdin = strings.NewReader(input)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	pickup := filepath.Join(bin, "pickup")
	hook := []string{"--dir", c.dir, "hook", "post-tool-use"}
	run(b, pickup, "--dir", c.dir, "hook", "session-start")
	throttle := filepath.Join(c.dir, ".pickup", "claude", "beats", owner)
	mark := filepath.Join(c.dir, ".pickup", "pg-beats", owner)
	old := time.Now().Add(-time.Hour)
	bench := func(name string, prep func(), prog string, args ...string) {
		b.Run(name, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				if prep != nil {
					prep()
				}
				b.StartTimer()
				run(b, prog, args...)
			}
		})
	}
	bench("empty-go-program", nil, empty)
	bench("hook-throttled", nil, pickup, hook...)
	bench("hook-renews-no-beat-due", func() {
		_ = os.Chtimes(throttle, old, old)
		now := time.Now()
		_ = os.Chtimes(mark, now, now)
	}, pickup, hook...)
	bench("hook-renews-beat-due", func() {
		_ = os.Chtimes(throttle, old, old)
		_ = os.Chtimes(mark, old, old)
	}, pickup, hook...)
	bench("shared-beat-process", func() { _ = os.Chtimes(mark, old, old) }, pickup, "--dir", c.dir, "--owner", owner, "shared-beat")
	time.Sleep(time.Second) // the last detached beats finish before the board is removed
}
