package postgres

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/pickup-dev/pickup/internal/gitx"
)

// Before each batch, the pusher reconciles the database with the board
// branch as it is: the events its recent commits list are marked pushed
// (a push that landed though its mark did not), and a branch that no
// longer has pickup's last push (force-pushed back, or deleted) gets the
// events it lost pushed again.

// reconciled is what a reconcile did: marked events that were on the
// branch but not marked; dropped the last tip pickup left there if the
// branch no longer has it, and repushed the events marked not pushed for
// that.
type reconciled struct {
	marked   int
	dropped  string
	repushed int
}

// reconcile brings the database's marks in line with the branch at tip
// ("" if the remote has none): it marks the events that the branch's last
// pickup commits list (pushed by a pusher that did not live to mark them)
// and, if the branch lost the commit the last push left there, marks not
// pushed every event after the newest one they list. One transaction.
func (s *Board) reconcile(ctx context.Context, h History, tip string) (reconciled, error) {
	var rec reconciled
	info, err := s.HistoryInfo()
	if err != nil {
		return rec, err
	}
	on, err := h.onBranch(ctx, tip, info.Tip)
	if err != nil {
		return rec, err
	}
	var seqs []int64
	if tip != "" {
		// The last pickup commits, past any a person added on top.
		out, err := h.Repo.Run(ctx, "log", "-n", strconv.Itoa(reconcileDepth), "--grep=^"+TrailerKey+": ",
			"--format=%(trailers:key="+TrailerKey+",valueonly,separator=%x2C)", tip)
		if err != nil {
			return rec, err
		}
		for _, line := range strings.Split(out, "\n") {
			got, err := ParseSeqs(line)
			if err != nil {
				continue // a malformed trailer: not ours
			}
			seqs = append(seqs, got...)
		}
	}
	req := Request{Op: "history_mark", Seqs: seqs}
	if !on {
		rec.dropped = info.Tip
		req.Rewound, req.Tip = true, tip
		if len(seqs) > 0 {
			req.After = slices.Max(seqs)
		}
	} else if len(seqs) == 0 {
		return rec, nil
	}
	res, err := s.call("record the history's push", req)
	rec.marked, rec.repushed = res.Count, res.Repushed
	if err != nil {
		rec.dropped = ""
	}
	return rec, err
}

// onBranch reports whether the branch at tip has commit (the tip the last
// push left there; "" if none did: nothing to lose). A commit this clone
// does not have is not on it: the fetch brought tip with every ancestor.
func (h History) onBranch(ctx context.Context, tip, commit string) (bool, error) {
	switch {
	case commit == "" || commit == tip:
		return true, nil
	case tip == "" || !isHex(commit):
		return false, nil
	}
	if _, err := h.Repo.Run(ctx, "cat-file", "-e", commit+"^{commit}"); err != nil {
		return false, nil
	}
	_, err := h.Repo.Run(ctx, "merge-base", "--is-ancestor", commit, tip)
	var ge *gitx.Error
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ge) && ge.Code == 1:
		return false, nil
	}
	return false, err
}

// isHex reports whether s looks like an object name (the tip is read
// from the database: never an option to git).
func isHex(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
