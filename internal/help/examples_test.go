package help

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/testbin"
	"github.com/pickup-dev/pickup/internal/testbound"
)

// TestExamples runs every console example of README.md and of the topics
// and compares what each command prints with what the example shows (the
// convention is in topics/development.md, "Examples are executed"):
//
//   - a ```console block is an example: each "$ " line is a command (with
//     its "> " continuation lines), the lines up to the next "$ " are what
//     it prints, stdout and stderr together;
//   - the commands of one block run in one bash, in a scratch directory of
//     their own with a new board-less work folder, so `echo $?` and shell
//     variables work as in a terminal;
//   - "<!-- example: continues -->" on the line before a block runs it
//     after the file's previous block, in the same folder;
//   - "<!-- example: not run: REASON -->" on the line before a block skips
//     it; the reason is counted and printed with -v.
//
// Ids, times, durations, pids, the host and the work folder are
// normalized, and runs of blanks count as one (a longer id widens a
// table). An expected line ending in "…" matches any line that starts
// with what precedes it.
func TestExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts pickup a few hundred times")
	}
	bin := filepath.Dir(exampleBinary.Path(t, t.TempDir()))
	// pickup board, pickup mcp and pickup serve hand over to pickup-board,
	// pickup-mcp and pickup-web, found beside pickup.
	for _, prog := range []string{"pickup-board", "pickup-mcp", "pickup-web"} {
		if out, err := exec.Command("go", "build", "-race=false", "-o", filepath.Join(bin, prog),
			"github.com/pickup-dev/pickup/internal/cmd/"+prog).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", prog, err, out)
		}
	}
	docs := map[string]string{"README.md": readFile(t, "../../README.md")}
	for _, tp := range Topics() {
		text, _ := Text(tp.Name)
		docs["internal/help/topics/"+tp.Name+".md"] = text
	}
	names := make([]string, 0, len(docs))
	for name := range docs {
		names = append(names, name)
	}
	sort.Strings(names)

	ran, commands := 0, 0
	var notRun []string
	for _, name := range names {
		examples, err := parseExamples(name, docs[name])
		if err != nil {
			t.Error(err)
			continue
		}
		var sh *exampleShell
		for _, ex := range examples {
			if ex.skip != "" {
				notRun = append(notRun, fmt.Sprintf("%s:%d: %s", ex.file, ex.line, ex.skip))
				continue
			}
			if !ex.continues || sh == nil {
				if sh != nil {
					sh.close()
				}
				sh = startShell(t, bin)
			}
			t.Run(fmt.Sprintf("%s:%d", filepath.Base(name), ex.line), func(t *testing.T) {
				ran++
				commands += len(ex.steps)
				sh.run(t, ex)
			})
		}
		if sh != nil {
			sh.close()
		}
	}
	t.Logf("executed %d console examples (%d commands); %d not run:", ran, commands, len(notRun))
	for _, s := range notRun {
		t.Logf("  not run: %s", s)
	}
	if ran == 0 {
		t.Fatal("no example was executed")
	}
}

var exampleBinary testbin.Once

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// example is one console block.
type example struct {
	file      string
	line      int    // the line of its ```console
	skip      string // why it is not run, if it is not
	continues bool   // runs in the previous block's shell
	steps     []step
}

// step is one command of an example and what it prints.
type step struct {
	line int
	cmd  string
	want []string
}

var directive = regexp.MustCompile(`^<!-- example: (continues|not run: (.+)) -->$`)

// parseExamples reads the console blocks of one markdown file.
func parseExamples(file, text string) ([]example, error) {
	lines := strings.Split(text, "\n")
	var out []example
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " ")
		if trimmed != "```console" {
			continue
		}
		indent := len(lines[i]) - len(trimmed)
		ex := example{file: file, line: i + 1}
		if i > 0 {
			if m := directive.FindStringSubmatch(strings.TrimSpace(lines[i-1])); m != nil {
				ex.continues = m[1] == "continues"
				ex.skip = m[2]
			}
		}
		j := i + 1
		for ; j < len(lines); j++ {
			l := lines[j]
			if len(l) >= indent && strings.TrimSpace(l[:indent]) == "" {
				l = l[indent:]
			}
			if strings.HasPrefix(l, "```") {
				break
			}
			switch {
			case strings.HasPrefix(l, "$ "):
				ex.steps = append(ex.steps, step{line: j + 1, cmd: l[2:]})
			case len(ex.steps) == 0:
				return nil, fmt.Errorf("%s:%d: a console example starts with a \"$ \" command line", file, j+1)
			case strings.HasPrefix(l, "> ") && len(ex.steps[len(ex.steps)-1].want) == 0:
				ex.steps[len(ex.steps)-1].cmd += "\n" + l[2:]
			default:
				ex.steps[len(ex.steps)-1].want = append(ex.steps[len(ex.steps)-1].want, l)
			}
		}
		if j == len(lines) {
			return nil, fmt.Errorf("%s:%d: console block never closed", file, i+1)
		}
		out = append(out, ex)
		i = j
	}
	return out, nil
}

// exampleShell is one bash in a scratch folder, with the ids each side
// has seen so far.
type exampleShell struct {
	work  string
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   chan []byte
	ids   normalizer
	host  string
	clean func()
}

func startShell(t *testing.T, bin string) *exampleShell {
	t.Helper()
	root, err := os.MkdirTemp("", "pickup-example-")
	if err != nil {
		t.Fatal(err)
	}
	work, home := filepath.Join(root, "repo"), filepath.Join(root, "home")
	for _, d := range []string{work, home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gitconfig := "[user]\n\tname = Ana\n\temail = ana@example.com\n[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(gitconfig), 0o644); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	sh := &exampleShell{work: work, host: host, out: make(chan []byte, 64)}
	sh.cmd = exec.Command("bash", "--norc", "--noprofile")
	sh.cmd.Dir = work
	sh.cmd.Env = []string{
		"PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + home,
		"GIT_CONFIG_GLOBAL=" + filepath.Join(home, ".gitconfig"),
		"GIT_CONFIG_NOSYSTEM=1",
		"PICKUP_OWNER=ana",
		"TZ=UTC", "LANG=C", "TERM=dumb",
		"TMPDIR=" + root,
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	sh.cmd.Stdout, sh.cmd.Stderr = w, w
	if sh.in, err = sh.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := sh.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				sh.out <- bytes.Clone(buf[:n])
			}
			if err != nil {
				close(sh.out)
				return
			}
		}
	}()
	sh.clean = func() {
		sh.in.Close()
		done := make(chan struct{})
		go func() { sh.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			sh.cmd.Process.Kill()
			<-done
		}
		testbin.WaitDetached(root)
		os.RemoveAll(root)
	}
	fmt.Fprintf(sh.in, "exec 2>&1\n")
	return sh
}

func (sh *exampleShell) close() { sh.clean() }

// endMark follows each command's output; the exit status survives it.
const endMark = "\x00end of example command\x00\n"

// run runs ex's commands one by one and compares their output.
func (sh *exampleShell) run(t *testing.T, ex example) {
	for _, st := range ex.steps {
		cmd := sh.ids.commandIDs(st.cmd)
		fmt.Fprintf(sh.in, "{\n%s\n} </dev/null\n__rc=$?; printf '\\000end of example command\\000\\n'; (exit $__rc)\n", cmd)
		// One command: the bound only catches a hang (room for a busy
		// machine many times slower than a quiet one).
		got, ok := sh.read(testbound.Idle)
		if !ok {
			t.Fatalf("%s:%d: $ %s\ndid not finish within %s; it printed:\n%s", ex.file, st.line, st.cmd, testbound.Idle, got)
		}
		gotLines := sh.ids.normalize(got, true, sh.work, sh.host)
		wantLines := sh.ids.normalize(strings.Join(st.want, "\n"), false, "", "")
		if !matchLines(gotLines, wantLines) {
			t.Errorf("%s:%d: $ %s\nthe example shows:\n%s\npickup printed:\n%s\n(normalized, the example:\n%s\nand pickup:\n%s)",
				ex.file, st.line, st.cmd, indent(strings.Join(st.want, "\n")), indent(got),
				indent(strings.Join(wantLines, "\n")), indent(strings.Join(gotLines, "\n")))
		}
	}
}

// read returns what the shell printed up to the next end mark.
func (sh *exampleShell) read(timeout time.Duration) (string, bool) {
	var acc []byte
	deadline := time.After(timeout)
	for {
		if i := bytes.Index(acc, []byte(endMark)); i >= 0 {
			return string(acc[:i]), true
		}
		select {
		case b, ok := <-sh.out:
			if !ok {
				return string(acc), false
			}
			acc = append(acc, b...)
		case <-deadline:
			return string(acc), false
		}
	}
}

func indent(s string) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		b.WriteString("    | " + sc.Text() + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// matchLines compares normalized lines; a wanted line ending in "…"
// matches any line that starts with the rest.
func matchLines(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range want {
		if prefix, ok := strings.CutSuffix(want[i], "…"); ok && prefix != "" {
			if !strings.HasPrefix(got[i], prefix) {
				return false
			}
			continue
		}
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// docWorkDirs are the folders the examples show as their working folder;
// the folder above each stands for the scratch folder that holds it
// (where an example may put a remote: ../origin.git).
var docWorkDirs = []string{"/home/ana/repo", "/tmp/tour/myproject"}

var (
	idPattern   = regexp.MustCompile(`\b\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d(?:-\d+)?(?:\.[a-z0-9]{5}(?:-\d+)?)?\b`)
	timePattern = regexp.MustCompile(`\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z\b`)
	durPattern  = regexp.MustCompile(`\b\d+(?:\.\d+)?(?:h|ms|µs|ns|m|s)(?:\d+(?:\.\d+)?(?:h|ms|µs|ns|m|s))*\b`)
	hashPattern = regexp.MustCompile(`\b[0-9a-f]{12,40}\b`)
	pidPattern  = regexp.MustCompile(`\bpid \d+( \([^)]*\))?`)
	blanks      = regexp.MustCompile(`[ \t]+`)
)

// normalizer numbers the ids each side (the example, pickup's output)
// shows in the order they first appear, so that an example written on
// 2026-11-22 matches a run today.
type normalizer struct {
	doc, real map[string]int
	realByN   map[int]string
}

func (n *normalizer) number(side map[string]int, id string) int {
	if k, ok := side[id]; ok {
		return k
	}
	k := len(side) + 1
	side[id] = k
	return k
}

func (n *normalizer) init() {
	if n.doc == nil {
		n.doc, n.real, n.realByN = map[string]int{}, map[string]int{}, map[int]string{}
	}
}

// commandIDs replaces the example's ids in cmd with the ids the run gave
// the same sessions; an id the run has not seen is kept as it is.
func (n *normalizer) commandIDs(cmd string) string {
	n.init()
	return idPattern.ReplaceAllStringFunc(cmd, func(id string) string {
		k := n.number(n.doc, id)
		if real, ok := n.realByN[k]; ok {
			return real
		}
		n.real[id] = k
		n.realByN[k] = id
		return id
	})
}

// normalize returns text's lines with ids, times, durations, pids, the
// host and the work folder replaced by placeholders.
func (n *normalizer) normalize(text string, real bool, work, host string) []string {
	n.init()
	if real {
		for _, dir := range []string{work, mustEval(work)} {
			if dir != "" {
				text = strings.ReplaceAll(text, dir, "<WORK>")
				text = strings.ReplaceAll(text, filepath.Dir(dir), "<ROOT>")
			}
		}
		if host != "" {
			text = regexp.MustCompile(`\b`+regexp.QuoteMeta(host)+`\b`).ReplaceAllString(text, "<HOST>")
		}
	} else {
		for _, d := range docWorkDirs {
			text = strings.ReplaceAll(text, d, "<WORK>")
			text = strings.ReplaceAll(text, filepath.Dir(d), "<ROOT>")
		}
		text = regexp.MustCompile(`\bbox\b`).ReplaceAllString(text, "<HOST>")
	}
	text = idPattern.ReplaceAllStringFunc(text, func(id string) string {
		var k int
		if real {
			k = n.number(n.real, id)
			if _, ok := n.realByN[k]; !ok {
				n.realByN[k] = id
			}
		} else {
			k = n.number(n.doc, id)
		}
		return fmt.Sprintf("<ID%d>", k)
	})
	text = timePattern.ReplaceAllString(text, "<TIME>")
	text = hashPattern.ReplaceAllString(text, "<HASH>")
	text = durPattern.ReplaceAllString(text, "<DUR>")
	text = pidPattern.ReplaceAllStringFunc(text, func(p string) string {
		if strings.Contains(p, "(") {
			return "pid <PID> (<NAME>)" // a process's name changes when it execs
		}
		return "pid <PID>"
	})
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(blanks.ReplaceAllString(l, " "), " ")
	}
	return lines
}

func TestParseExamples(t *testing.T) {
	doc := "text\n```console\n$ echo a\na\n$ cat > f <<'EOF'\n> x\n> EOF\n```\n" +
		"<!-- example: continues -->\n  ```console\n  $ cat f\n  x\n  > not a continuation\n  ```\n" +
		"<!-- example: not run: needs a remote -->\n```console\n$ pickup sync\n```\n```sh\n$ not an example\n```\n"
	got, err := parseExamples("doc.md", doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d examples, want 3: %+v", len(got), got)
	}
	if s := got[0].steps; len(s) != 2 || s[0].cmd != "echo a" || strings.Join(s[0].want, "|") != "a" ||
		s[1].cmd != "cat > f <<'EOF'\nx\nEOF" || len(s[1].want) != 0 || got[0].continues || got[0].skip != "" {
		t.Errorf("first example: %+v", got[0])
	}
	if s := got[1].steps; !got[1].continues || len(s) != 1 || s[0].cmd != "cat f" || strings.Join(s[0].want, "|") != "x|> not a continuation" {
		t.Errorf("second example (indented, continues): %+v", got[1])
	}
	if got[2].skip != "needs a remote" {
		t.Errorf("third example: skip %q", got[2].skip)
	}
	for _, bad := range []string{"```console\nno prompt\n```\n", "```console\n$ echo\n"} {
		if _, err := parseExamples("bad.md", bad); err == nil {
			t.Errorf("parseExamples(%q) accepted it", bad)
		}
	}
}

func TestNormalizer(t *testing.T) {
	var n normalizer
	// The example created 2026-11-22_09-15-03; the run created another id.
	want := n.normalize("2026-11-22_09-15-03", false, "", "")
	got := n.normalize("2026-11-27_12-45-10-2", true, "/tmp/x", "vm")
	if !matchLines(got, want) {
		t.Fatalf("ids: %q against %q", got, want)
	}
	if cmd := n.commandIDs("pickup done 2026-11-22_09-15-03 2026-11-22_09-10-00"); cmd != "pickup done 2026-11-27_12-45-10-2 2026-11-22_09-10-00" {
		t.Errorf("commandIDs: %q", cmd)
	}
	want = n.normalize("held by a (pid 4242 (claude) on box, for 3m10s) at 2026-11-22T09:15:03Z in /home/ana/repo/.spx", false, "", "")
	got = n.normalize("held by a (pid 77 (bash) on vm, for 0s) at 2026-11-27T12:00:00.5Z in /tmp/x/.spx", true, "/tmp/x", "vm")
	if !matchLines(got, want) {
		t.Errorf("normalized:\n%q\n%q", got, want)
	}
	if matchLines(n.normalize("claimed [high]", true, "", ""), n.normalize("claimed [low]", false, "", "")) {
		t.Error("different words matched")
	}
	if !matchLines([]string{"claimed x [medium] Fix"}, []string{"claimed x [medium] …"}) {
		t.Error("a line ending in … does not match a longer one")
	}
}

// mustEval is dir with its links resolved, or "" if that fails or
// changes nothing.
func mustEval(dir string) string {
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil || resolved == dir {
		return ""
	}
	return resolved
}
