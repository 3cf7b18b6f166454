package sharedways

// The world acting on a shared board while agents drain it: the agents
// are executable bash scripts whose subshells call pickup, each call
// bounded by timeout(1) so that a command that hangs is counted, not
// waited for; the world is the test (a remote that stops answering, a full
// disk). After each scenario every session must have been claimed once
// and finished once, and be in done/ on the remote and in every clone.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/testbound"
)

// worldAgentScript is an agent: $3 subshells each loop `pickup next`,
// `pickup done` until next has said "nothing available" three times in a
// row. A failure whose exit code is among $5 (default 8: the remote
// failed) is retried after a pause, as the hint says; after a next that
// exited 8 the agent also does the rest of what the hint says: once the
// remote answers (sync), `list --mine` shows what the owner holds (a
// claim whose push landed while its answer was lost), and it works on it. Every
// pickup call is stopped after $4 seconds with SIGQUIT (exit 124: it hung;
// Go prints every goroutine's stack into its stderr); each one's
// exit code and times go to <log>.calls, its stderr to <log>.err, claims
// and finishes to <log>.
const worldAgentScript = `#!/bin/bash
cd "$1" || exit 2
logs=$2 hard=$4 retry=" ${5:-8} "
call() {
  local t0=$EPOCHREALTIME
  out=$(timeout -k 2 -s QUIT "$hard" pickup --owner "$owner" "$@" 2>"$log.last")
  rc=$?
  echo "$1 $rc $t0 $EPOCHREALTIME" >> "$log.calls"
  { echo "== $* exit $rc from $t0 to $EPOCHREALTIME"; cat "$log.last"; } >> "$log.err"
  return $rc
}
finish() {
  echo "claim $1" >> "$log"
  while ! call done "$1"; do
    [[ "$retry" == *" $rc "* ]] || break
    sleep 0.2
  done
  if [ "$rc" = 0 ]; then echo "done $1" >> "$log"; else echo "error done $1 exit $rc" >> "$log"; fi
}
for n in $(seq 1 "$3"); do
  (
    owner="$(basename "$1")-w$n" log="$logs/$(basename "$1")-w$n" empty=0 uncertain=0
    while [ "$empty" -lt 3 ] || [ "$uncertain" = 1 ]; do
      if [ "$uncertain" = 1 ]; then
        # A next that exited 8 may have claimed at the remote all the
        # same (its push landed, its answer was lost): as its hint says,
        # once the remote answers, list --mine shows what this owner
        # holds, and the agent works on it.
        if call sync && call list --mine --json; then
          uncertain=0
          for id in $(grep -o '"id":"[^"]*"' <<<"$out" | cut -d'"' -f4); do finish "$id"; done
        else
          sleep 0.2
        fi
        continue
      fi
      call next --json
      case $rc in
      0)
        empty=0
        finish "$(sed -n 's/.*"id": *"\([^"]*\)".*/\1/p' <<<"$out")"
        ;;
      3) empty=$((empty + 1)); sleep 0.3 ;;
      8) uncertain=1; sleep 0.2 ;;
      *)
        [[ "$retry" == *" $rc "* ]] || echo "error next exit $rc" >> "$log"
        sleep 0.2
        ;;
      esac
    done
  ) &
done
wait
`

// worldBinary is the pickup the agents run: $SHAREDWAYS_PICKUP if set (to
// run a scenario against another build, for before/after figures), else
// this tree's.
func worldBinary(t testing.TB) string {
	if p := os.Getenv("SHAREDWAYS_PICKUP"); p != "" {
		return p
	}
	return pickupBinary(t)
}

// world is a running set of agent scripts, one per clone.
type world struct {
	t    *testing.T
	logs string
	cmds []*exec.Cmd
	outs []*strings.Builder
}

// startAgents starts one agent script per clone with subshells agents
// each, every pickup call killed after hard, env added to theirs; the
// agents retry exit 8.
func startAgents(ctx context.Context, t *testing.T, r *remote, cs []*clone, subshells int, hard time.Duration, env ...string) *world {
	return startAgentsRetrying(ctx, t, r, cs, subshells, hard, "8", env...)
}

// startAgentsRetrying is startAgents whose agents retry the exit codes in
// retry (space-separated).
func startAgentsRetrying(ctx context.Context, t *testing.T, r *remote, cs []*clone, subshells int, hard time.Duration, retry string, env ...string) *world {
	t.Helper()
	tmp, script, bin := agentFiles(t, worldAgentScript, worldBinary(t))
	w := &world{t: t, logs: filepath.Join(tmp, "logs")}
	if err := os.MkdirAll(w.logs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		cmd := exec.CommandContext(ctx, script, c.dir, w.logs, strconv.Itoa(subshells), strconv.Itoa(int(hard/time.Second)), retry)
		cmd.Env = append(append(baseEnv(r.home), "PATH="+bin+":"+os.Getenv("PATH")), env...)
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		// The whole script's process group (its subshells and their
		// pickup calls) dies when ctx ends, and with the test.
		cmd.SysProcAttr = groupAttr()
		cmd.Cancel = func() error { return killGroup(cmd) }
		cmd.WaitDelay = time.Second
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = killGroup(cmd) })
		w.cmds = append(w.cmds, cmd)
		w.outs = append(w.outs, out)
	}
	return w
}

// observe makes every claim or finish the agents log progress for bound.
func (w *world) observe(bound *testbound.Watch) {
	bound.Observe(func() string { return movedLines(w.logs, ".calls", ".err", ".last") })
}

// exited counts the agents' calls so far that exited code.
func (w *world) exited(code int) int {
	n := 0
	files, _ := filepath.Glob(filepath.Join(w.logs, "*.calls"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(data), "\n") {
			if fs := strings.Fields(line); len(fs) > 1 && fs[1] == strconv.Itoa(code) {
				n++
			}
		}
	}
	return n
}

// worldCall is one pickup call of an agent.
type worldCall struct {
	cmd   string
	code  int
	start time.Time
	took  time.Duration
}

// wait waits for the scripts and reads their logs: what each agent
// claimed and finished, and every call.
func (w *world) wait() ([]*agentLog, []worldCall) {
	w.t.Helper()
	for i, cmd := range w.cmds {
		if err := cmd.Wait(); err != nil {
			w.t.Errorf("agent script: %v\n%s", err, w.outs[i])
		}
	}
	var logs []*agentLog
	var calls []worldCall
	entries, _ := os.ReadDir(w.logs)
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(w.logs, name)
		switch {
		case strings.HasSuffix(name, ".calls"):
			for _, f := range readFields(w.t, path) {
				code, _ := strconv.Atoi(f[1])
				t0, _ := strconv.ParseFloat(f[2], 64)
				t1, _ := strconv.ParseFloat(f[3], 64)
				calls = append(calls, worldCall{cmd: f[0], code: code, start: time.Unix(0, int64(t0*1e9)),
					took: time.Duration((t1 - t0) * float64(time.Second))})
			}
		case strings.HasSuffix(name, ".err"), strings.HasSuffix(name, ".last"):
		default:
			l := &agentLog{owner: name}
			for _, f := range readFields(w.t, path) {
				switch f[0] {
				case "claim":
					l.claimed = append(l.claimed, f[1])
				case "done":
					l.done = append(l.done, f[1])
				default:
					l.errs = append(l.errs, strings.Join(f, " "))
				}
			}
			logs = append(logs, l)
		}
	}
	return logs, calls
}

// stderr is what the agents' pickup calls wrote on stderr.
func (w *world) stderr() string {
	var b strings.Builder
	entries, _ := os.ReadDir(w.logs)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".err") {
			data, _ := os.ReadFile(filepath.Join(w.logs, e.Name()))
			fmt.Fprintf(&b, "== %s\n%s", e.Name(), data)
		}
	}
	return b.String()
}

func readFields(t testing.TB, path string) [][]string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) > 0 {
			out = append(out, fs)
		}
	}
	return out
}

// callStats summarizes calls: how many, how many hung (killed by the
// bound), how many exited 8, and the longest of each command.
func callStats(calls []worldCall) (n, hung, remote int, longest map[string]time.Duration) {
	longest = map[string]time.Duration{}
	for _, c := range calls {
		n++
		if c.code == 124 || c.code == 137 {
			hung++ // stopped by timeout(1)
		}
		if c.code == 8 {
			remote++
		}
		longest[c.cmd] = max(longest[c.cmd], c.took)
	}
	return n, hung, remote, longest
}

// doneOnRemote counts the sessions in done/ on the remote.
func doneOnRemote(r *remote) int {
	n := 0
	for _, f := range r.branchFiles() {
		if strings.HasPrefix(f, "done/") {
			n++
		}
	}
	return n
}

// waitFor polls cond every 20 ms until it holds or ctx ends.
func waitFor(ctx context.Context, cond func() bool) bool {
	for ctx.Err() == nil {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sessionPlaces lists where a clone's board and the remote have id.
func sessionPlaces(r *remote, c *clone, id string) (local, remote []string) {
	files, _ := c.boardFiles()
	for _, f := range files {
		if strings.HasSuffix(f, "/"+id+".md") {
			local = append(local, f)
		}
	}
	for _, f := range r.branchFiles() {
		if strings.HasSuffix(f, "/"+id+".md") {
			remote = append(remote, f)
		}
	}
	return local, remote
}
