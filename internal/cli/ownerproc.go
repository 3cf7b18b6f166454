package cli

import (
	"fmt"
	"strconv"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/proc"
)

// Which processes an owner's lease and locks follow. The rule itself is
// proc.Env.Invokers'; this file adds what the command line says (--pid,
// $PICKUP_PID) and what Claude Code's hooks recorded.

// explicitPID is --pid, else $PICKUP_PID, else 0.
func (r *run) explicitPID() (int, error) {
	pid, _, err := r.explicitPIDWhy()
	return pid, err
}

// explicitPIDWhy is explicitPID with where it came from (a proc.Why value).
func (r *run) explicitPIDWhy() (int, string, error) {
	if r.pid != 0 {
		return r.pid, proc.WhyFlagPID, nil
	}
	v := r.env.Getenv("PICKUP_PID")
	if v == "" {
		return 0, "", nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, "", usageError("$PICKUP_PID=%q is not a process id", v)
	}
	return n, proc.WhyEnvPID, nil
}

// ownerHolders are the processes whose life the owner's lease follows:
// the process --pid or $PICKUP_PID names; else, for a Claude Code session's
// own owner, the Claude Code process its SessionStart hook recorded (a
// command in Claude Code's Bash sandbox cannot see that process, and must
// not tie the lease to its own short-lived, renumbered processes); else
// the processes that invoked pickup, up to the first that does work of its
// own (proc.Env.Invokers). None at all means the lease can only be judged
// by heartbeats.
func (r *run) ownerHolders(owner string) ([]proc.Process, error) {
	env := r.procEnv()
	pid, why, err := r.explicitPIDWhy()
	if err != nil {
		return nil, err
	}
	if pid != 0 {
		p, err := env.Lookup(pid)
		if err != nil {
			return nil, fmt.Errorf("owner process: %w (pass --pid of a running process)", err)
		}
		p.Why = why
		return []proc.Process{p}, nil
	}
	if p, ok := r.claudeSessionProcess(owner); ok {
		p.Why = "the Claude Code session (its SessionStart hook recorded it)"
		return []proc.Process{p}, nil
	}
	return env.Invokers(), nil
}

// procEnv is where this run learns about processes. One memoized Env per
// run: a next or a hook looks up its own process, host and boot several
// times (its lease, the invoker walk, judging other owners).
func (r *run) procEnv() proc.Env {
	if r.proc == nil {
		env := proc.Env{Hostname: r.env.Hostname}.Memoized()
		r.proc = &env
	}
	return *r.proc
}

// invokerProcess is the one process a lock or a Claude Code hook is tied
// to: the process --pid or $PICKUP_PID names, else the first process above
// pickup that does work of its own (an agent, a program), or the outermost
// shell of the job that ran pickup, or the interactive shell pickup was
// typed at, past every shell and wrapper in between.
func (r *run) invokerProcess() (proc.Process, error) {
	env := r.procEnv()
	pid, err := r.explicitPID()
	if err != nil {
		return proc.Process{}, err
	}
	if pid != 0 {
		p, err := env.Lookup(pid)
		if err != nil {
			return proc.Process{}, fmt.Errorf("owner process: %w (pass --pid of a running process)", err)
		}
		return p, nil
	}
	chain := env.Invokers()
	if len(chain) == 0 {
		return proc.Process{}, fmt.Errorf("owner process: cannot tell which process ran pickup (no usable /proc, or its parent has exited); pass --pid of the process that works for this owner")
	}
	return chain[len(chain)-1], nil
}

// claimHolders is ps as the claim package's holders.
func claimHolders(ps []proc.Process) []claim.Holder {
	hs := make([]claim.Holder, len(ps))
	for i, p := range ps {
		hs[i] = claim.Holder(p)
	}
	return hs
}
