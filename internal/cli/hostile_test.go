package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pickup-dev/pickup/internal/cli"
	"github.com/pickup-dev/pickup/sessions"
)

// hostile is what an agent, a person or another clone can write into any
// file pickup reads: CSI (clear the screen), OSC (retitle the terminal,
// ended by BEL), a right-to-left override and a left-to-right isolate,
// the C1 CSI, DEL, a carriage return.
const hostile = "\x1b[2J\x1b]0;PWNED\x07\u202eRLO\u2066LRI\u009bC1\x7fDEL\rCR"

// hostileJSON is hostile as a JSON string's content.
func hostileJSON() string {
	data, _ := json.Marshal(hostile)
	return string(data[1 : len(data)-1])
}

// rawRunes returns what in out would reach a terminal raw: every control
// character but \n and \t, DEL, C1, bidirectional controls, and whether
// out is valid UTF-8 at all.
func rawRunes(out string) []string {
	var found []string
	if !utf8.ValidString(out) {
		found = append(found, "invalid UTF-8")
	}
	for _, r := range out {
		switch {
		case r == '\n' || r == '\t':
		case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0,
			r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			found = append(found, fmt.Sprintf("U+%04X", r))
		}
	}
	return found
}

// TestHostileFilesNeverReachTheTerminalRaw writes hostile content into
// every file pickup reads (a session's title, tags, body and last error,
// an owner's directory, a stray file's name, events.log's every field, a
// lease, a lock record, config.yaml) and runs every command that prints
// them, as on a terminal: no output may hold a raw control, bidi or
// invalid byte. --json output must stay valid JSON.
func TestHostileFilesNeverReachTheTerminalRaw(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "board")
	b, err := sessions.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(b.Dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := hostileJSON() // YAML double-quoted strings read JSON's escapes
	write("todo/h1.md", "---\ntitle: \""+h+"\"\ntags: [\""+h+"\"]\n---\nbody "+hostile+" \xff\xfe invalid\n")
	write("todo/h2.md", "---\ntitle: \"two\"\ndepends_on: [\""+h+"\"]\n---\n")
	write("todo/h3.md", "---\ntitle: [broken "+hostile+"\n---\n")
	write("failed/h4.md", "---\ntitle: \"set aside\"\nattempts: 3\nlast_error: \""+h+"\"\n---\n")
	write("doing/ev\x1b[2Jil/h5.md", "---\ntitle: x\n---\n")
	write("todo/\x1b[2J\u202e.md", "stray\n")
	now := time.Now().UTC().Format(time.RFC3339Nano)
	write("events.log", `{"time":"`+now+`","id":"h1","op":"new`+h+`","from":"`+h+`","to":"todo`+h+`","owner":"`+h+`","reason":"`+h+`"}`+"\n"+
		"torn line "+hostile+"\n")
	write(".pickup/leases/al.json", `{"owner":"al","holders":[{"host":"`+h+`","pid":1,"pid_ns":1,"start":1,"boot_id":"`+h+`","exe":"/bin/`+h+`"}],"created_at":"`+now+`","heartbeat_at":"`+now+`"}`)
	write("doing/al/h6.md", "---\ntitle: \""+h+"\"\n---\n")
	write(".pickup/locks/k1.lock", `{"key":"k1","owner":"`+h+`","process":{"host":"`+h+`","pid":1,"pid_ns":1,"start":1,"boot_id":"`+h+`","exe":"/bin/`+h+`"},"acquired_at":"`+now+`","heartbeat_at":"`+now+`","ttl":"10m0s","token":"`+h+`"}`)

	run := func(t *testing.T, args ...string) (string, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		env := &cli.Env{
			Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut,
			Getenv:           func(string) string { return "" },
			Getwd:            func() (string, error) { return b.Dir, nil },
			Hostname:         os.Hostname,
			Now:              time.Now,
			StdoutIsTerminal: true,
		}
		cli.Main(env, append([]string{"pickup", "--dir", b.Dir, "--owner", "tester", "--no-sync"}, args...))
		return out.String(), errOut.String()
	}
	check := func(t *testing.T, args ...string) string {
		t.Helper()
		out, errOut := run(t, args...)
		for name, s := range map[string]string{"stdout": out, "stderr": errOut} {
			if found := rawRunes(s); len(found) > 0 {
				t.Errorf("pickup %s: %s holds %v raw:\n%q", strings.Join(args, " "), name, found, s)
			}
		}
		for _, a := range args {
			if a == "--json" && out != "" {
				for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
					if !json.Valid([]byte(line)) {
						t.Errorf("pickup %s: not JSON: %s", strings.Join(args, " "), line)
					}
				}
			}
		}
		return out + errOut
	}

	for _, args := range [][]string{
		{"list"}, {"list", "--json"}, {"list", "--all"},
		{"show", "h1"}, {"show", "h1", "--json"}, {"show", "h3"}, {"show", "h6"},
		{"log"}, {"log", "h1"}, {"log", "--json"},
		{"status"}, {"status", "--failed"}, {"status", "--json"},
		{"doctor"}, {"doctor", "--json"},
		{"lock", "list"}, {"lock", "list", "--json"}, {"lock", "check", "k1"},
		{"claim", "h1"}, {"release", "h1"}, {"next"}, {"requeue", "h4"},
		{"claim", "h\x1b[2J"}, {"show", "\u202eh1"}, {"--owner", "x\x1b[2J", "next"},
		{"reap", "--dry-run"}, {"heartbeat", "h6"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) { check(t, args...) })
	}
	// That the escapes were there to be made: log printed the owner.
	if out := check(t, "log", "h1"); !strings.Contains(out, `\x1b[2J\x1b]0;PWNED\x07\u202eRLO`) {
		t.Errorf("log does not show the owner, escaped:\n%s", out)
	}
	// work's progress lines and the error of a failed run.
	write("todo/w1.md", "---\ntitle: \""+h+"\"\n---\n")
	t.Run("work", func(t *testing.T) {
		check(t, "work", "--max-attempts", "1", "--", "sh", "-c", "exit 1")
	})
	// A config.yaml whose values are hostile: every command refuses it,
	// quoting them.
	write("config.yaml", "stale: \""+h+"\"\nlineup_age: \""+h+"\"\n"+h+": 1\n")
	for _, args := range [][]string{{"list"}, {"doctor"}, {"doctor", "--json"}, {"next"}} {
		t.Run("config "+strings.Join(args, " "), func(t *testing.T) { check(t, args...) })
	}
}
