package postgres

// The history in git. PostgreSQL decides every transition and keeps it in
// pickup_events; the board's history also lands on a branch of the git
// remote, in batches, so that `git log` of that branch tells what
// happened, session by session, without a push per transition.
//
// One process at a time pushes, chosen through the database: the pusher
// holds an advisory lock on its connection (gone with the connection, so
// a killed pusher lets the next go at once), and the pushes are spaced by
// the interval on the server's clock (pickup_history.attempt_at: the first
// state read that finds a push due takes the turn, and its process starts
// the pusher in the background at once, Options.OnHistoryDue; claims never
// wait for git).
//
// A batch is one commit on the branch's tip: its tree is the board as the
// database has it (todo/<id>.md, doing/<owner>/<id>.md, done/<id>.md),
// read in the same snapshot as the events it lists, one line each, "id op
// src → dst by owner", and a trailer Pickup-Events naming their sequence
// numbers. The push is a fast-forward, never forced: one refused (someone
// pushed first) fetches and builds again on the new tip. Only after the
// push are the events marked pushed in the database; a pusher that dies
// between the two leaves them unmarked, and the next one reads the
// trailers of the branch's last commits and marks what they list before it
// builds its batch: nothing is lost, nothing is listed twice.
//
// People rewrite branches. pickup_history.tip is the branch's tip as the
// last pusher left it; a branch that no longer has that commit (someone
// force-pushed it back to an older one, or deleted it) lost the commits
// after it, and the events they listed are marked pushed. The same
// reconcile that marks what the branch lists then also marks not pushed
// every event after the newest one a trailer on the branch names (all of
// them, if none does): they go in this batch again, and a deleted branch
// starts again from a commit of its own with the whole board. That repair
// cannot list an event twice even when it runs for nothing (the branch
// still names every event up to its newest), so a doubt (a tip this clone
// cannot read) counts as a rewind.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/sessions"
)

// historyRef is where the pusher fetches the remote's board branch (a ref
// of pickup's own: no branch of the user's moves).
const historyRef = "refs/pickup/pg-history"

// TrailerKey names a batch's events in its commit message.
const TrailerKey = "Pickup-Events"

// reconcileDepth is how many of the branch's last commits a pusher reads
// for events pushed but not marked (a pusher killed between its push and
// its mark leaves one such commit; racing pushers a few).
const reconcileDepth = 10

// pushAttempts bounds the pushes in a row refused because another pusher
// (or a person) pushed first.
const pushAttempts = 5

// History is where a board's history goes: a git repository (the clone
// the board is in), its remote and the branch there.
type History struct {
	Repo   *gitx.Repo
	Remote string
	Branch string
	// Leader names this process in pickup_history (host:pid).
	Leader string
	// OnRewind, if set, is told at once when the pusher found the
	// branch without the commit the last push left there (dropped) and
	// marked repushed transitions to go on it again: before the push,
	// which may never come (the pusher killed) while the marks stand.
	OnRewind func(dropped string, repushed int)
}

// FlushResult says what a Flush did.
type FlushResult struct {
	// Busy: another process was pushing (and Flush did not wait).
	Busy bool
	// NotDue: the interval had not passed, or nothing waited.
	NotDue bool
	// Events: how many transitions the push put on the branch; Commit
	// its commit.
	Events int
	Commit string
	// Reconciled: events that a pusher before this one had pushed but
	// not marked.
	Reconciled int
	// Rewound: the branch no longer had the commit the last push left
	// there (Dropped: force-pushed back, or deleted); Repushed: how many
	// transitions, listed only by the commits it lost, were marked not
	// pushed to go in this batch again.
	Rewound  bool
	Dropped  string
	Repushed int
}

// HistoryDue reports whether a state this process read found a history
// push due and took the turn for this process (see OpenWith).
func (s *Board) HistoryDue() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.historyDue
}

// HistoryInfo says how the history stands in the database.
func (s *Board) HistoryInfo() (*HistoryInfo, error) {
	res, err := s.call("read the history", Request{Op: "history_info"})
	if err != nil {
		return nil, err
	}
	return res.History, nil
}

// Flush pushes the transitions that are not on the branch yet, as one
// commit, if this process is the one pusher (else Busy; with wait, it
// waits up to wait for the other to finish, then pushes what is left).
// force pushes even if the interval has not passed since the last
// attempt (pickup sync, or a process that took the turn).
func (s *Board) Flush(ctx context.Context, h History, every time.Duration, force bool, wait time.Duration) (FlushResult, error) {
	var res FlushResult
	deadline := time.Now().Add(wait)
	for {
		r, err := s.call("take the history's turn", Request{Op: "history_begin", Owner: h.Leader, Force: force, HistoryEveryMS: every.Milliseconds()})
		if err != nil {
			return res, err
		}
		if !r.Busy {
			if !r.HistoryDue {
				s.endHistory()
				res.NotDue = true
				return res, nil
			}
			break
		}
		if time.Now().After(deadline) {
			res.Busy = true
			return res, nil
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	defer s.endHistory()
	if !h.Repo.ObjectsInProcess() {
		return res, fmt.Errorf("history: %s is not a SHA-1 repository of its own objects: pickup cannot write its history commits there yet", h.Repo.Top)
	}
	for try := 0; ; try++ {
		tip, err := h.fetch(ctx)
		if err != nil {
			return res, err
		}
		rec, err := s.reconcile(ctx, h, tip)
		res.Reconciled += rec.marked
		if rec.dropped != "" {
			res.Rewound, res.Dropped = true, rec.dropped
			res.Repushed += rec.repushed
			if h.OnRewind != nil {
				h.OnRewind(rec.dropped, rec.repushed)
			}
		}
		if err != nil {
			return res, err
		}
		batch, err := s.call("read the history", Request{Op: "history_batch"})
		if err != nil {
			return res, err
		}
		if len(batch.Events) == 0 {
			res.NotDue = res.Events == 0
			return res, nil
		}
		commit, err := h.commit(tip, batch.Events, batch.Rows, s.URL)
		if err != nil {
			return res, err
		}
		_, err = h.Repo.Run(ctx, "push", "--quiet", "--no-verify", h.Remote, commit+":refs/heads/"+h.Branch)
		if err != nil {
			if gitx.PushRejected(err) && try+1 < pushAttempts {
				continue // someone pushed first: build again on their tip
			}
			return res, historyError("push", h, err)
		}
		seqs := make([]int64, len(batch.Events))
		for i, e := range batch.Events {
			seqs[i] = e.Seq
		}
		if _, err := s.call("record the history's push", Request{Op: "history_mark", Seqs: seqs, Tip: commit, Pushed: true}); err != nil {
			// On the branch but not marked: the next pusher's
			// reconcile marks them from the trailer.
			return res, err
		}
		res.Events, res.Commit = len(seqs), commit
		return res, nil
	}
}

func (s *Board) endHistory() { _, _ = s.call("end the history's turn", Request{Op: "history_end"}) }

// historyError names the remote and says what to do.
func historyError(op string, h History, err error) error {
	var ge *gitx.Error
	if errors.As(err, &ge) {
		err = errors.New(ge.Summary())
	}
	return fmt.Errorf("history: %s %s %s: %w (the transitions stay in the database and go in the next batch)", op, h.Remote, h.Branch, err)
}

// fetch fetches the board branch into historyRef and returns its tip, ""
// if the remote has no such branch yet.
func (h History) fetch(ctx context.Context) (string, error) {
	_, err := h.Repo.Run(ctx, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", h.Remote, "+refs/heads/"+h.Branch+":"+historyRef)
	if err != nil {
		var ge *gitx.Error
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "couldn't find remote ref") {
			_, _ = h.Repo.Run(ctx, "update-ref", "-d", historyRef)
			return "", nil
		}
		return "", historyError("fetch", h, err)
	}
	out, err := h.Repo.Run(ctx, "rev-parse", "--verify", "-q", historyRef+"^{commit}")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// commit writes the batch's commit on tip: its tree is the board as rows
// has it, its message lists events.
func (h History) commit(tip string, events []Event, rows []Row, db string) (string, error) {
	files := map[string]gitx.TreeFile{}
	for _, r := range rows {
		if !historyPlace(r) {
			continue // not a place of a board: never a path in the tree
		}
		sha, err := h.Repo.WriteObject("blob", r.Body)
		if err != nil {
			return "", err
		}
		files[place(r.State, r.Owner)+"/"+r.ID+".md"] = gitx.TreeFile{Mode: "100644", Sha: sha}
	}
	tree, err := h.Repo.WriteTree(files)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", tree)
	if tip != "" {
		fmt.Fprintf(&b, "parent %s\n", tip)
	}
	who := fmt.Sprintf("pickup <pickup@localhost> %d +0000", time.Now().Unix())
	fmt.Fprintf(&b, "author %s\ncommitter %s\n\n%s", who, who, Message(events, db))
	return h.Repo.WriteObject("commit", []byte(b.String()))
}

// historyPlace reports whether r's place is one a board has: a valid id
// in todo, done or failed, or in doing with a valid owner.
func historyPlace(r Row) bool {
	if sessions.ValidateID(r.ID) != nil {
		return false
	}
	switch sessions.State(r.State) {
	case sessions.Doing:
		return sessions.ValidateOwner(r.Owner) == nil
	case sessions.Todo, sessions.Done, sessions.Failed:
		return r.Owner == ""
	}
	return false
}

// Message is a batch's commit message: a subject, one line per
// transition, and the trailers.
func Message(events []Event, db string) string {
	var b strings.Builder
	if len(events) == 1 {
		fmt.Fprintf(&b, "pickup: 1 transition\n\n")
	} else {
		fmt.Fprintf(&b, "pickup: %d transitions\n\n", len(events))
	}
	seqs := make([]int64, len(events))
	for i, e := range events {
		seqs[i] = e.Seq
		b.WriteString(EventLine(e))
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "\n%s: %s\nPickup-Database: %s\n", TrailerKey, FormatSeqs(seqs), oneLine(db))
	return b.String()
}

// EventLine is one transition as the history's commit lists it: "id op
// src → dst by owner (reason)".
func EventLine(e Event) string {
	src := e.Src
	if src == "" {
		src = "∅"
	}
	line := fmt.Sprintf("%s %s %s → %s", e.ID, e.Op, src, e.Dst)
	if e.Owner != "" {
		line += " by " + e.Owner
	}
	if e.Reason != "" {
		line += " (" + e.Reason + ")"
	}
	return oneLine(line)
}

// oneLine keeps a message line one line (reasons and owners come from
// users).
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// FormatSeqs writes sequence numbers as ranges: "1-5,7,9-12".
func FormatSeqs(seqs []int64) string {
	s := slices.Clone(seqs)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	s = slices.Compact(s)
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.FormatInt(s[i], 10))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", s[i], s[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// ParseSeqs reads FormatSeqs' ranges.
func ParseSeqs(text string) ([]int64, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, errors.New("no sequence numbers")
	}
	var out []int64
	for _, part := range strings.Split(text, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.ParseInt(lo, 10, 64)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			if b, err = strconv.ParseInt(hi, 10, 64); err != nil {
				return nil, err
			}
		}
		if b < a || b-a > 10_000_000 {
			return nil, fmt.Errorf("bad range %q", part)
		}
		for v := a; v <= b; v++ {
			out = append(out, v)
		}
	}
	return out, nil
}

// Leader names this process for pickup_history: host:pid.
func Leader() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s:%d", host, os.Getpid())
}
