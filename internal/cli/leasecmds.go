package cli

import (
	"fmt"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/claimhook"
	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

// leaseRefresh is how often claims renew an unchanged lease's heartbeat.
const leaseRefresh = time.Minute

func (r *run) leases(b *sessions.Board) *claim.Leases {
	l := &claim.Leases{Board: b, Now: r.env.Now}
	claimhook.UseSystem(l, r.procEnv())
	return l
}

// register makes the owner's processes part of its lease before it claims.
// If every process of the lease provably exited, that earlier run's
// sessions come back to todo/ first (attempt counted), and it says so.
func (r *run) register(c *claim.Client) error {
	holders, err := r.ownerHolders(c.Owner)
	if err != nil {
		return err
	}
	taken, err := r.leases(c.Board).Ensure(c.Owner, leaseRefresh, claim.ReapOptions{}, claimHolders(holders)...)
	r.reportTakenUp(c.Owner, taken)
	if err == nil && r.shared.arbiter() != nil {
		// In a detached process: the claim does not wait for a push of
		// the heartbeat ref (a round trip) before its own.
		r.spawnClaimBeat(c.Board, c.Owner)
	}
	return err
}

// reportTakenUp tells on stderr what a new run of owner took back from a
// dead earlier run of it.
func (r *run) reportTakenUp(owner string, taken []claim.Reaped) {
	for _, x := range taken {
		where := "todo"
		if x.SetAside {
			where = "failed/ (attempt limit reached)"
		}
		fmt.Fprintf(r.env.Stderr, "pickup: %s was still held by an earlier run of %s whose processes exited (%s); returned it to %s, attempt %d\n",
			x.ID, sanitize(owner), sanitize(x.Reason), where, x.Attempt)
	}
}

func (r *run) heartbeatCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "heartbeat",
		Usage:     "renew this owner's lease; with ids, also check it still holds them",
		UsageText: "pickup heartbeat [ID...]",
		Description: "Leases of owners whose process is alive on this host never go stale, so agents need\n" +
			"not call this; hooks and `pickup lock run` / `pickup work` do it for them. With session\n" +
			"ids it exits 6 if the owner's claim on one of them was reaped (do not finish that\n" +
			"session; take other work).\n\nExample: pickup heartbeat 2026-11-22_09-15-03",
		Action: func(c *ucli.Context) error {
			cl, err := r.client()
			if err != nil {
				return err
			}
			for _, id := range c.Args().Slice() {
				if err := cl.Holds(id); err != nil {
					return err
				}
			}
			holders, err := r.ownerHolders(cl.Owner)
			if err != nil {
				return err
			}
			lease, err := r.leases(cl.Board).Heartbeat(cl.Owner, claimHolders(holders)...)
			if err != nil {
				return err
			}
			r.sharedHeartbeat(cl.Owner, false)
			if r.json {
				return r.printJSON(lease)
			}
			return nil
		},
	}
}

func (r *run) reapCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "reap",
		Usage:     "return the sessions of dead or stale owners to todo/",
		UsageText: "pickup reap [--stale DUR] [--max-attempts K] [--dry-run]",
		Description: "An owner is dead when its process on this host is gone (its claims come back at once)\n" +
			"and stale when its liveness cannot be checked (another host, no process) and it has not\n" +
			"heartbeated for --stale. An owner whose process is alive here is never reaped.\n" +
			"A reaped owner's later done, release or heartbeat of those sessions exits 6.\n" +
			"Each reap counts as an attempt of the session (attempts and last_error in its\n" +
			"frontmatter); one that reaches --max-attempts (default: max_attempts in config.yaml,\n" +
			"else 3) is set aside in failed/ instead of todo/ (`pickup requeue ID` puts it back).\n" +
			"`pickup next` reaps dead owners by itself. Concurrent reapers are safe.\n\n" +
			"Examples:\n   pickup reap --dry-run\n   pickup reap --stale 2h",
		Flags: []ucli.Flag{
			&ucli.DurationFlag{Name: "stale", Usage: "heartbeat age after which an unverifiable owner is stale (default 30m)"},
			&ucli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "say what would be reaped, change nothing"},
			&ucli.IntFlag{Name: "max-attempts", Usage: "set a session aside in failed/ once it reaches K attempts (default: the board's max_attempts, else 3; 0: never)"},
		},
		Action: func(c *ucli.Context) error {
			b, err := r.board()
			if err != nil {
				return err
			}
			if !c.Bool("dry-run") {
				if err := r.readyToChange(b); err != nil {
					return err
				}
			}
			stale, err := r.stale(c, b)
			if err != nil {
				return err
			}
			opts := claim.ReapOptions{Stale: stale, DryRun: c.Bool("dry-run")}
			if c.IsSet("max-attempts") {
				if opts.MaxAttempts = c.Int("max-attempts"); opts.MaxAttempts < 0 {
					return usageError("--max-attempts must be 0 (never set aside) or more")
				}
				if opts.MaxAttempts == 0 {
					opts.MaxAttempts = -1 // the library's "never"
				}
			}
			reaped, err := r.leases(b).Reap(opts)
			if err != nil {
				return err
			}
			if r.json {
				if reaped == nil {
					reaped = []claim.Reaped{}
				}
				return r.printJSON(reaped)
			}
			verb := "reaped"
			if c.Bool("dry-run") {
				verb = "would reap"
			}
			for _, x := range reaped {
				if x.Err != "" {
					r.printf("could not reap %s from %s: %s\n", x.ID, x.Owner, x.Err)
					continue
				}
				where := "todo/"
				if x.SetAside {
					where = "failed/"
				}
				r.printf("%s %s from %s to %s, attempt %d (%s: %s)\n", verb, x.ID, x.Owner, where, x.Attempt, x.State, sanitize(x.Reason))
			}
			if len(reaped) == 0 {
				r.printf("nothing to reap\n")
			}
			return nil
		},
	}
}

// stale is --stale, else the board's setting, else the default.
func (r *run) stale(c *ucli.Context, b *sessions.Board) (time.Duration, error) {
	if c.IsSet("stale") {
		d := c.Duration("stale")
		if d <= 0 {
			return 0, usageError("--stale must be a positive duration such as 45m")
		}
		return d, nil
	}
	cfg, err := b.Config()
	if err != nil {
		return 0, err
	}
	if cfg.Stale > 0 {
		return cfg.Stale, nil
	}
	return claim.DefaultStale, nil
}

type ownerStatus struct {
	Owner     string           `json:"owner"`
	State     claim.OwnerState `json:"state"`
	Reason    string           `json:"reason"`
	LeaseAge  string           `json:"lease_age,omitempty"`
	Heartbeat string           `json:"heartbeat_age,omitempty"`
	PID       int              `json:"pid,omitempty"`
	Host      string           `json:"host,omitempty"`
	Holders   []claim.Holder   `json:"holders,omitempty"`
	// Elsewhere: an owner of another machine of a PostgreSQL board (Host
	// is then its heartbeat's machine), its last heartbeat in the
	// database DBHeartbeat ago (statusheard.go).
	Elsewhere bool `json:"elsewhere,omitempty"`
	// ThisMachine: an owner of a PostgreSQL board that works in another
	// board of this machine (its lease is known through the database).
	ThisMachine bool     `json:"this_machine,omitempty"`
	DBHeartbeat string   `json:"db_heartbeat_age,omitempty"`
	Sessions    []string `json:"sessions"`
}

func (r *run) statusCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "status",
		Usage:     "show owners (alive, dead or stale, lease age, their sessions) and set-aside sessions",
		UsageText: "pickup status [--stale DUR] [--failed] [--json]",
		Description: "After the owners, the sessions set aside in failed/ with their attempts and last error.\n" +
			"--failed shows only those; with --json an array of {id, title, attempts, last_error,\n" +
			"set_aside_at, path}. (status --json alone is the array of owners, as it always was.)\n\n" +
			"Examples:\n   pickup status\n   pickup status --failed --json",
		Flags: []ucli.Flag{
			&ucli.DurationFlag{Name: "stale", Usage: "heartbeat age after which an unverifiable owner is stale (default 30m)"},
			&ucli.BoolFlag{Name: "failed", Usage: "only the sessions set aside in failed/"},
		},
		Action: func(c *ucli.Context) error {
			b, err := r.viewBoard()
			if err != nil {
				return err
			}
			if c.Bool("failed") {
				return r.printSetAside(b, true)
			}
			stale, err := r.stale(c, b)
			if err != nil {
				return err
			}
			leases := r.leases(b)
			owners, err := b.Owners()
			if err != nil {
				return err
			}
			now := r.env.Now()
			out := []ownerStatus{}
			for _, o := range owners {
				list, err := b.ListOwner(o)
				if err != nil {
					return err
				}
				state, lease, reason := leases.Judge(o, stale)
				st := ownerStatus{Owner: o, State: state, Reason: reason, Sessions: []string{}}
				if !lease.Created.IsZero() {
					st.LeaseAge = now.Sub(lease.Created).Round(time.Second).String()
					st.Heartbeat = now.Sub(lease.Heartbeat).Round(time.Second).String()
					st.Holders = lease.Holders
					if len(lease.Holders) > 0 {
						// The first holder, as before holders were a set.
						st.PID, st.Host = lease.Holders[0].PID, lease.Holders[0].Host
					}
				}
				for _, s := range list {
					st.Sessions = append(st.Sessions, s.ID)
				}
				if len(list) == 0 && lease.Created.IsZero() {
					continue // an empty directory left behind
				}
				r.heardOwner(&st)
				out = append(out, st)
			}
			if r.json {
				return r.printJSON(out)
			}
			if len(out) == 0 {
				r.printf("no owners hold sessions\n")
			}
			for _, st := range out {
				r.printf("%s: %s (%s)", st.Owner, st.State, sanitize(st.Reason))
				if st.LeaseAge != "" {
					r.printf(", lease %s old, heartbeat %s ago", st.LeaseAge, st.Heartbeat)
				}
				r.printf("\n")
				// Each process that holds the owner, and why it was taken.
				for _, h := range st.Holders {
					line := h.String()
					if h.Why != "" {
						line += ": " + h.Why
					}
					r.printf("  held by %s\n", sanitize(line))
				}
				r.printHeardOwner(st)
				for _, id := range st.Sessions {
					r.printf("  %s\n", id)
				}
			}
			r.printArbiterStatus() // a PostgreSQL board's history in git
			return r.printSetAside(b, false)
		},
	}
}
