package sessions

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCheckReportsUnreadableSessions: a session file the board's user cannot
// read is skipped by listing, so doctor must name it. Root reads anything,
// so when the test runs as root the check runs in a child process as the
// unprivileged user nobody.
func TestCheckReportsUnreadableSessions(t *testing.T) {
	root := t.TempDir()
	b, err := Init(filepath.Join(root, "board"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"locked.md", "open.md"} {
		if err := os.WriteFile(filepath.Join(b.Dir, "todo", name), []byte("---\ntitle: x\n---\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(b.Dir, "todo", "locked.md"), 0); err != nil {
		t.Fatal(err)
	}
	var findings []Finding
	if os.Geteuid() != 0 {
		if findings, err = b.Check(false); err != nil {
			t.Fatal(err)
		}
	} else {
		// Let nobody walk to the board and read everything but locked.md.
		// t.TempDir's directories (below os.TempDir) are the test's own.
		tmp := filepath.Clean(os.TempDir())
		for d := b.Dir; d != tmp && d != "/"; d = filepath.Dir(d) {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for d := tmp; d != "/"; d = filepath.Dir(d) {
			info, err := os.Stat(d)
			if err != nil || info.Mode().Perm()&0o001 == 0 {
				t.Skipf("%s is not searchable by other users, so nobody cannot reach the board", d)
			}
		}
		// The test binary sits in go's private build directory: give
		// nobody a copy it can run.
		exe, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		self := filepath.Join(root, "sessions.test")
		if err := os.WriteFile(self, exe, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(self, "-test.run=^TestCheckUnreadableHelper$")
		cmd.Env = append(os.Environ(), "PICKUP_CHECK_HELPER="+b.Dir)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("helper as nobody: %v", err)
		}
		line := out
		if i := strings.LastIndex(string(out), "FINDINGS:"); i >= 0 {
			line = []byte(strings.SplitN(string(out[i+len("FINDINGS:"):]), "\n", 2)[0])
		}
		if err := json.Unmarshal(line, &findings); err != nil {
			t.Fatalf("helper output %q: %v", out, err)
		}
	}
	var unreadable []string
	for _, f := range findings {
		if f.Kind == "unreadable" {
			unreadable = append(unreadable, filepath.Base(f.Path))
		}
	}
	if len(unreadable) != 1 || unreadable[0] != "locked.md" {
		t.Errorf("unreadable findings = %v, want exactly [locked.md] (all findings: %+v)", unreadable, findings)
	}
}

// TestCheckUnreadableHelper runs Board.Check for
// TestCheckReportsUnreadableSessions in a process of another user.
func TestCheckUnreadableHelper(t *testing.T) {
	dir := os.Getenv("PICKUP_CHECK_HELPER")
	if dir == "" {
		t.Skip("helper process")
	}
	findings, err := (&Board{Dir: dir}).Check(false)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(findings)
	os.Stdout.Write([]byte("FINDINGS:" + string(data) + "\n"))
}
