package pgways

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// beatStale is the stale period of the heartbeat tests: long enough that a
// round of commands on a busy machine (each a process and a database round
// trip) never outlasts it, which 2 s did.
const beatStale = "5s"

// TestHooksKeepOwnerAliveAcrossHosts: a Claude Code session on another
// host (far.invalid, see farPickup) holds a claim and only its hooks run
// there (session-start, then post-tool-use whenever its throttle lets it
// renew): its heartbeats land in the database, and this host never reaps
// it while they come, for three stale periods. When they stop (the agent
// still runs on its host, which this host cannot see), this host reaps it
// after stale. On its own host an agent killed with SIGKILL loses its
// claim at once.
func TestHooksKeepOwnerAliveAcrossHosts(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 2)
	far, here := cs[0], cs[1]
	if err := os.WriteFile(filepath.Join(far.dir, "config.yaml"), []byte("shared: "+url+"\nstale: "+beatStale+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(far.must("", "new", "-t", "a long Claude Code session"))
	claude := sleeper(t) // the Claude Code process, on the far host
	const owner = "hooked"
	agentEnv := []string{"PICKUP_PID=" + pidArg(claude)}
	hook := func(event string) {
		t.Helper()
		res := farPickupIn(t, far, agentEnv, fmt.Sprintf(`{"session_id":%q,"cwd":%q}`, owner, filepath.Dir(far.dir)), "--dir", far.dir, "hook", event)
		if res.code != 0 || strings.Contains(res.stderr, "pickup: hook") {
			t.Fatalf("hook %s: exit %d\n%s", event, res.code, res.stderr)
		}
	}
	holds := func() bool {
		return server.psql(t, db, "SELECT state || '/' || owner FROM pickup_sessions WHERE id = '"+id+"'") == "doing/"+owner
	}
	hook("session-start")
	if res := farPickupIn(t, far, agentEnv, "", "--dir", far.dir, "--owner", owner, "claim", id); res.code != 0 {
		t.Fatalf("claim on the far host: exit %d\n%s", res.code, res.stderr)
	}
	// The session's agent holds a named lock too: the owner's heartbeats
	// keep it held on other hosts past its TTL.
	if res := farPickupIn(t, far, agentEnv, "", "--dir", far.dir, "--owner", owner, "lock", "acquire", "repo:main", "--ttl", beatStale); res.code != 0 {
		t.Fatalf("lock acquire on the far host: exit %d\n%s", res.code, res.stderr)
	}
	beats := func() string { return server.psql(t, db, "SELECT at FROM pickup_beats WHERE owner = '"+owner+"'") }
	throttle := filepath.Join(far.dir, ".pickup", "claude", "beats", owner)
	time.Sleep(1500 * time.Millisecond) // past the beat interval (stale/4) of session-start's beat
	last := beats()
	// A round starts past the beat interval (stale/4 = 1.25 s) after the
	// last beat landed, so the hook's beat is due: a round of 1 s plus two
	// commands was shorter than that on a fast machine, and its beat
	// rightly skipped.
	const round = 1500 * time.Millisecond
	for i := range 8 { // 8 × (1 s + 1.5 s) = 20 s: four stale periods
		// A minute of tool uses passes between rounds: the hook's
		// throttle file is set back so that post-tool-use renews.
		old := time.Now().Add(-2 * time.Minute)
		_ = os.Chtimes(throttle, old, old)
		began := time.Now()
		hook("post-tool-use")
		time.Sleep(time.Second)
		if out := here.must("reaper", "reap", "--stale", beatStale); strings.Contains(out, id) || !holds() {
			t.Fatalf("after %d s this host reaped %s of %s, whose hooks beat on its own host:\n%s", i+1, id, owner, out)
		}
		if res := here.pickup(context.Background(), "near", "lock", "acquire", "repo:main"); res.code != 3 {
			t.Fatalf("after %d s this host took the lock of %s, whose hooks beat on its own host: exit %d\n%s", i+1, owner, res.code, res.stderr)
		}
		// The beat is pushed by a detached child of the hook: wait for it
		// (a hang bound, far past a busy machine's process start). A
		// hook that ran before the last beat's mark was an interval old
		// rightly skipped its beat: the agent's next tool use beats.
		again := time.Now()
		for cur := beats(); ; cur = beats() {
			if cur != last {
				last = cur
				break
			}
			if time.Since(began) > time.Minute {
				t.Fatalf("round %d: the hook recorded no heartbeat in the database (still %q)", i+1, cur)
			}
			if time.Since(again) > 2*time.Second {
				_ = os.Chtimes(throttle, old, old)
				hook("post-tool-use")
				again = time.Now()
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(round)
	}
	// The hooks stop (a session thinking for a long time, or a host cut
	// off): after stale, this host takes the session back.
	deadline := time.Now().Add(time.Minute) // a hang bound, past stale
	for holds() {
		if time.Now().After(deadline) {
			t.Fatalf("this host never reaped %s of %s after its heartbeats stopped", id, owner)
		}
		time.Sleep(500 * time.Millisecond)
		here.must("reaper", "reap", "--stale", beatStale)
	}

	if res := here.pickup(context.Background(), "near", "lock", "acquire", "repo:main"); res.code != 0 {
		t.Errorf("the silent owner's lock was not taken here after its TTL: exit %d\n%s", res.code, res.stderr)
	}

	// On its own host, an agent killed with SIGKILL loses its claim at
	// once: the next claimer there reaps it through the database.
	victim := sleeper(t)
	id2 := strings.TrimSpace(far.must("", "new", "-t", "killed"))
	if res := farPickupIn(t, far, []string{"PICKUP_PID=" + pidArg(victim)}, "", "--dir", far.dir, "--owner", "victim", "claim", id2); res.code != 0 {
		t.Fatalf("victim's claim: exit %d\n%s", res.code, res.stderr)
	}
	_ = victim.Process.Kill()
	_ = victim.Wait()
	// Within the stale period: only its death can free it.
	res := farPickupIn(t, far, nil, "", "--dir", far.dir, "reap", "--stale", "1h")
	if res.code != 0 || !strings.Contains(res.stdout, id2) {
		t.Fatalf("reap on the killed agent's host: exit %d, want %s reaped\n%s%s", res.code, id2, res.stdout, res.stderr)
	}
	if got := server.psql(t, db, "SELECT state FROM pickup_sessions WHERE id = '"+id2+"'"); got != "todo" {
		t.Errorf("the database has %s in %s, want todo", id2, got)
	}
}
