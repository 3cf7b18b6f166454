package gitremote

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/sessions"
)

// Group commit. Every push is a round trip to the remote and the remote
// takes one ref update at a time, so a clone pushes the transitions of all
// its processes that wait at that moment in one commit: each transition
// is queued as a request file under <git dir>/pickup/queue/, and whichever
// process gets the clone's lock pushes every queued request and writes
// each one's outcome next to it. A process that gets the lock and finds
// its outcome written is done.

// request is a queued transition.
type request struct {
	Event sessions.Event `json:"event"`
	Src   string         `json:"src"`
	Dst   string         `json:"dst"`
	// The event's absolute paths, which it does not encode.
	AbsSrc string `json:"abs_src,omitempty"`
	AbsDst string `json:"abs_dst,omitempty"`
	name   string // the request file's name
}

// outcome is what became of a request.
type outcome struct {
	OK bool `json:"ok,omitempty"`
	// Seen and Now: the remote's board branch went backwards (Now "":
	// deleted) from Seen, the last tip this clone saw.
	Seen string `json:"seen,omitempty"`
	Now  string `json:"now,omitempty"`
	// Identity: the fetched board's config.yaml does not say this board
	// (the refusal's message and hint).
	Identity     string `json:"identity,omitempty"`
	IdentityHint string `json:"identity_hint,omitempty"`

	Lost   bool           `json:"lost,omitempty"`
	Found  bool           `json:"found,omitempty"`
	Where  string         `json:"where,omitempty"`
	State  sessions.State `json:"state,omitempty"`
	Owner  string         `json:"owner,omitempty"`
	Remote string         `json:"remote,omitempty"` // the remote's failure
	// Timeout: the remote did not answer within the network deadline
	// (Remote says how long that was).
	Timeout bool `json:"timeout,omitempty"`
	// Busy: given up after Attempts refusals in a row.
	Busy bool `json:"busy,omitempty"`
	// Disk: the disk was full (or the quota used up) at Path.
	Disk bool   `json:"disk,omitempty"`
	Path string `json:"path,omitempty"`
	// Settled marks an outcome (a request file written over by its
	// outcome, by a lead killed before the rename, is told apart so).
	Settled bool `json:"settled"`
}

func (s *Board) queueDir() string { return filepath.Join(s.dir, "queue") }

// Publish is the board's Arbiter: it makes the transition e, which has
// just happened in the board directory, a commit on the remote's board
// branch, and reports whether it stands. A refusal undoes the local move
// (the session goes where the remote has it) and records nothing.
func (s *Board) Publish(e sessions.Event) error {
	ctx := context.Background()
	req := request{Event: e, Src: s.rel(e.Src), Dst: s.rel(e.Dst), AbsSrc: e.Src, AbsDst: e.Dst}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	req.name = fmt.Sprintf("%d-%d-%s", time.Now().UnixNano(), os.Getpid(), hex.EncodeToString(rnd[:]))
	data, err := json.Marshal(req)
	if err != nil {
		return err
	}
	reqPath := filepath.Join(s.queueDir(), req.name+".req")
	resPath := filepath.Join(s.queueDir(), req.name+".res")
	err = os.MkdirAll(s.queueDir(), 0o755)
	if err == nil {
		err = fsx.WriteNew(reqPath, padded(data, outcomeRoom), 0o644, false)
	}
	if err != nil {
		// The move has happened here: undo it, or the clone would say
		// what the remote never heard of.
		err = fmt.Errorf("shared board: queue: %w", err)
		if unlock, lerr := s.lock(); lerr == nil {
			err = s.undoLocal(ctx, e, nil, err)
			unlock()
		}
		return &arbiter.Refusal{Op: e.Op, ID: e.ID, From: e.Src, To: e.Dst, Err: s.localErr(err)}
	}
	for {
		unlock, err := s.lock()
		var lw *LockWaitError
		if errors.As(err, &lw) {
			return s.withdraw(ctx, e, reqPath, resPath, lw)
		}
		if err != nil {
			return err
		}
		res, ok := readOutcome(resPath)
		if !ok {
			// A lead killed between writing the outcome over the request
			// and renaming it.
			if res, ok = readOutcome(reqPath); ok && !res.Settled {
				ok = false
			}
		}
		if ok {
			unlock()
			_ = os.Remove(resPath)
			_ = os.Remove(reqPath)
			return s.outcomeErr(e, res)
		}
		wait, mine := s.lead(ctx, req.name)
		unlock()
		switch {
		case mine != nil:
			// Its outcome, as this process settled it: it stands even if
			// the disk had no room to write it down.
			_ = os.Remove(resPath)
			return s.outcomeErr(e, *mine)
		case wait > 0:
			s.sleep(wait) // refused: let others push first, with the lock free
		case !fileExists(reqPath) && !fileExists(resPath):
			// Neither queued nor settled: nothing would ever answer it.
			return &arbiter.Refusal{Op: e.Op, ID: e.ID, From: e.Src, To: e.Dst,
				Err: fmt.Errorf("shared board: the queued request %s vanished without an outcome (was %s emptied by hand?); run `pickup sync` to see where the remote has %s", reqPath, s.queueDir(), e.ID)}
		}
	}
}

// withdraw takes a request out of the queue when the clone's lock stayed
// held for the whole wait, and undoes its local move: the agent is told
// that nothing moved, and no later lead pushes it. If a lead settled it
// meanwhile, that is the answer.
func (s *Board) withdraw(ctx context.Context, e sessions.Event, reqPath, resPath string, lw *LockWaitError) error {
	cerr := func(err error) error { return &arbiter.Refusal{Op: e.Op, ID: e.ID, From: e.Src, To: e.Dst, Err: err} }
	if err := os.Remove(reqPath); err != nil {
		if res, ok := readOutcome(resPath); ok {
			_ = os.Remove(resPath)
			return s.outcomeErr(e, res)
		}
		lw.Queued = true
		return cerr(lw)
	}
	// Without the lock: its holder is stopped, and this only puts one
	// session back where the remote last had it.
	if err := s.undoLocal(ctx, e, nil, nil); err != nil {
		return cerr(errors.Join(lw, err))
	}
	lw.Withdrawn = true
	return cerr(lw)
}

// outcomeRoom is the least size of a request file. A request's outcome is
// written over it in place (then renamed), which needs no new room on
// the disk: a full disk never keeps a process from learning what became
// of its transition.
const outcomeRoom = 1024

// padded is data followed by spaces up to n bytes (JSON allows them).
func padded(data []byte, n int) []byte {
	if len(data) >= n {
		return data
	}
	out := make([]byte, n)
	copy(out, data)
	for i := len(data); i < n; i++ {
		out[i] = ' '
	}
	return out
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// localErr is err, as a *DiskFullError if the disk was full.
func (s *Board) localErr(err error) error {
	if de := diskFull(err, s.dir); de != nil {
		return de
	}
	return err
}

func readOutcome(path string) (outcome, bool) {
	data, err := fsx.ReadRegular(path)
	if err != nil {
		return outcome{}, false
	}
	var o outcome
	if json.Unmarshal(data, &o) != nil {
		return outcome{}, false
	}
	return o, true
}

// outcomeErr is the error of a request's outcome (nil: it stands).
func (s *Board) outcomeErr(e sessions.Event, o outcome) error {
	switch {
	case o.OK:
		return nil
	case o.Lost:
		return s.lost(e, place{state: o.State, owner: o.Owner, path: o.Where}, o.Found)
	case o.Identity != "":
		return &arbiter.Refusal{Op: e.Op, ID: e.ID, From: e.Src, To: e.Dst, Err: &refusal{msg: o.Identity, hint: o.IdentityHint, kind: ErrIdentity}}
	case o.Seen != "":
		return &arbiter.Refusal{Op: e.Op, ID: e.ID, From: e.Src, To: e.Dst, Err: &HistoryError{Remote: s.Remote, Branch: s.Branch, Seen: o.Seen, Now: o.Now}}
	case o.Disk:
		return &arbiter.Refusal{Op: e.Op, ID: e.ID, From: e.Src, To: e.Dst, Err: &DiskFullError{Path: o.Path, Err: errors.New(o.Remote)}}
	case o.Busy:
		return s.remoteErr(e.Op, fmt.Errorf("%w: %s", errBusy, o.Remote))
	case o.Timeout:
		return s.remoteErr(e.Op, &timeoutText{o.Remote})
	default:
		return s.remoteErr(e.Op, errors.New(o.Remote))
	}
}

// queued reads the queued requests, oldest first.
func (s *Board) queued() []request {
	entries, err := os.ReadDir(s.queueDir())
	if err != nil {
		return nil
	}
	var out []request
	for _, ent := range entries {
		name, ok := strings.CutSuffix(ent.Name(), ".req")
		if !ok {
			continue
		}
		data, err := fsx.ReadRegular(filepath.Join(s.queueDir(), ent.Name()))
		if err != nil {
			continue
		}
		var r request
		if json.Unmarshal(data, &r) != nil || r.Event.ID == "" {
			continue // (an outcome written over its request, not yet renamed)
		}
		r.name = name
		r.Event.Src, r.Event.Dst = r.AbsSrc, r.AbsDst
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// settle writes a request's outcome and removes the request: over the
// request file, in place (it has outcomeRoom bytes), then renamed, so that
// it needs no room on a full disk.
func (s *Board) settle(r request, o outcome) {
	o.Settled = true
	if len(o.Remote) > outcomeRoom/2 {
		o.Remote = o.Remote[:outcomeRoom/2] + "…"
	}
	data, _ := json.Marshal(o)
	req := filepath.Join(s.queueDir(), r.name+".req")
	res := filepath.Join(s.queueDir(), r.name+".res")
	if writeOver(req, data) == nil && os.Rename(req, res) == nil {
		return
	}
	tmp := res + ".tmp"
	if os.WriteFile(tmp, data, 0o644) == nil {
		_ = os.Rename(tmp, res)
	}
	_ = os.Remove(req)
}

// writeOver writes data over the start of the file at path, padded with
// spaces to its whole size: the file's blocks are reused, none added.
func writeOver(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if int64(len(data)) > info.Size() {
		return fmt.Errorf("%s: %d bytes, no room for an outcome of %d", path, info.Size(), len(data))
	}
	_, err = f.WriteAt(padded(data, int(info.Size())), 0)
	return err
}

// pushedBefore reports whether log, the remote's event log, holds e's
// line: the transition is on the remote already.
func pushedBefore(log []byte, e sessions.Event) bool {
	line, err := json.Marshal(e)
	if err != nil {
		return false
	}
	return bytes.Contains(log, append(line, '\n'))
}

// repeated reports whether e, a done by its owner, repeats the remote's
// last transition of the session: the same owner finished it, and nothing
// moved the session since. (A release is not: of one owner's releases
// racing from two clones one wins, and the others are told the session
// waits in todo/.) That is a done whose push
// landed while its answer was lost (the command said exit 8, and was run
// again, as the hint says): it stands, as a repeated done does on a board
// that is not shared, instead of telling the owner its claim was lost.
func repeated(log []byte, e sessions.Event) bool {
	if e.Op != "done" || e.Owner == "" {
		return false
	}
	needle := []byte(`"id":"` + e.ID + `"`)
	for len(log) > 0 {
		log = bytes.TrimRight(log, "\n")
		i := bytes.LastIndexByte(log, '\n')
		line := log[i+1:]
		log = log[:max(i, 0)]
		if !bytes.Contains(line, needle) {
			continue
		}
		var last sessions.Event
		if json.Unmarshal(line, &last) != nil || last.ID != e.ID {
			continue
		}
		return last.Op == e.Op && last.Owner == e.Owner && last.To == e.To
	}
	return false
}

// lead pushes every queued request, with the clone's lock held. It
// returns how long to pause before trying again when the remote refused
// the push because someone pushed first (0: every request is settled),
// and the outcome of the request named mine if it settled it.
func (s *Board) lead(ctx context.Context, mine string) (time.Duration, *outcome) {
	var own *outcome
	settle := func(r request, o outcome) {
		s.settle(r, o)
		if r.name == mine {
			own = &o
		}
	}
	wait := s.leadAll(ctx, settle)
	return wait, own
}

// leadAll is lead, settling each request with settle.
func (s *Board) leadAll(ctx context.Context, settle func(request, outcome)) time.Duration {
	reqs := s.queued()
	if len(reqs) == 0 {
		return 0
	}
	// The lead's round trips share one deadline, so that the clone's lock
	// is never held past it by a remote that stopped answering.
	netCtx, cancel := context.WithTimeout(ctx, s.Repo.NetTimeoutOf())
	defer cancel()
	fail := func(err error) time.Duration {
		var re *RemoteError
		if errors.As(err, &re) {
			err = re.Err // the request's own error names the remote once
		}
		o := outcome{Remote: summary(err)}
		var he *HistoryError
		var ie *IdentityError
		if errors.As(err, &he) {
			o = outcome{Seen: he.Seen, Now: he.Now}
		} else if errors.As(err, &ie) {
			o = outcome{Identity: ie.Error(), IdentityHint: ie.Hint()}
		} else if de := diskFull(err, s.dir); de != nil {
			o = outcome{Disk: true, Path: de.Path, Remote: de.Err.Error()}
		} else if errors.Is(err, errBusy) {
			o.Busy = true
		} else if isNetTimeout(err) {
			// The remote stopped answering: the requests queued since
			// this push began would only wait for the lock to meet the
			// same silence. They are answered now, within the deadline.
			o.Timeout = true
			reqs = s.queued()
		}
		for _, r := range reqs {
			_ = s.undoLocal(ctx, r.Event, nil, nil)
			settle(r, o)
		}
		return 0
	}
	var refs map[string]string
	var err error
	fetched := s.refusals(0) > 0
	if fetched {
		// The last push of this clone was refused, and the remote's tip
		// has likely moved again during the pause since: fetch it now,
		// right before the push, not before the pause.
		if refs, err = s.fetch(netCtx); err == nil {
			s.seePeers(refs)
		} else if seen := s.readRef(ctx, refBoard); seen != "" {
			err = s.gone(seen, err)
		}
	} else {
		refs, err = s.refs(ctx)
	}
	if err != nil {
		return fail(err)
	}
	tip := refs[refBoard]
	if f := refs[refFetched]; f != "" && f != tip {
		// A fetch (this lead's, or another process's that was stopped
		// before applying): adopted only if the branch moved forward.
		if err := s.forward(ctx, tip, f); err != nil {
			return fail(err)
		}
		if err := s.forward(ctx, refs[refWitness+s.Branch], f); err != nil {
			return fail(err)
		}
		if err := s.apply(ctx, tip, f); err != nil {
			return fail(err)
		}
		tip = f
	}
	if fetched {
		s.markFresh()
	}
	t, err := s.lsTree(ctx, tip)
	if err != nil {
		return fail(err)
	}
	base := maps.Clone(t)
	// Each request against the tip as the earlier ones in the batch leave it.
	var take []request
	var moves []move
	var tipLog []byte // read once, if needed
	for _, r := range reqs {
		cur, found := t.find(r.Event.ID)
		if found && r.Dst != "" && cur.path == r.Dst && cur.path != r.Src {
			// The remote has it where this request takes it: if its very
			// event is in the remote's log, a process of this clone pushed
			// it and was killed before it could say so (or before it
			// noted the new tip): the request stands.
			if tipLog == nil {
				if tipLog, err = s.tipLog(ctx, t); err != nil {
					return fail(err)
				}
			}
			if pushedBefore(tipLog, r.Event) || repeated(tipLog, r.Event) {
				settle(r, outcome{OK: true})
				continue
			}
		}
		if (r.Src != "" && (!found || cur.path != r.Src)) || (r.Src == "" && found) {
			_ = s.undoLocal(ctx, r.Event, t, nil)
			settle(r, outcome{Lost: true, Found: found, Where: cur.path, State: cur.state, Owner: cur.owner})
			s.statLine("lost\n")
			continue
		}
		m := move{src: r.Src, dst: r.Dst, event: r.Event}
		if r.Dst != "" {
			data, err := fsx.ReadRegular(r.Event.Dst)
			if err != nil {
				// Moved on here since, by a later transition of this clone
				// queued behind this one: its file has the content.
				data, err = s.readAnywhere(r.Event.ID)
			}
			if err != nil {
				_ = s.undoLocal(ctx, r.Event, t, nil)
				settle(r, outcome{Remote: fmt.Sprintf("read %s: %v", r.Event.Dst, err)})
				continue
			}
			m.content = data
		}
		if r.Src != "" {
			delete(t, r.Src)
		}
		if r.Dst != "" {
			t[r.Dst] = entry{mode: "100644", sha: "pending"}
		}
		take = append(take, r)
		moves = append(moves, m)
	}
	if len(take) == 0 {
		return 0
	}
	reqs = take
	commit, logContent, err := s.commitFor(ctx, tip, base, moves)
	if err != nil {
		return fail(err)
	}
	for _, r := range reqs {
		if !fileExists(filepath.Join(s.queueDir(), r.name+".req")) {
			// Withdrawn by its process (see withdraw) since the queue was
			// read: build the batch again without it.
			return s.backoff(1)
		}
	}
	err = s.pushBoard(netCtx, tip, commit)
	if err == nil {
		_, _ = s.Repo.RunIn(ctx, []byte("update "+refBoard+" "+commit+"\nupdate "+refFetched+" "+commit+"\n"), nil, "update-ref", "--stdin")
		_ = s.place(sessions.EventLogFile, logContent, true)
		for _, r := range reqs {
			settle(r, outcome{OK: true})
		}
		s.stats(len(reqs), true)
		return 0
	}
	s.stats(0, false)
	if !pushRejected(err) {
		return fail(err)
	}
	// Someone pushed first: after a pause, the next lead fetches what they
	// did and tries again on their tip. Requests that lost are settled
	// then.
	n := s.refusals(1)
	if n > s.attempts() {
		s.refusals(-n)
		return fail(&busyError{n: n, last: summary(err)})
	}
	return s.backoff(n)
}

func (s *Board) attempts() int {
	if s.Attempts > 0 {
		return s.Attempts
	}
	return DefaultAttempts
}

// refusals counts the clone's pushes refused in a row (kept in the git
// directory, under the lock), adding add, and returns the count.
func (s *Board) refusals(add int) int {
	path := filepath.Join(s.dir, "refusals")
	n := 0
	if data, err := os.ReadFile(path); err == nil {
		fmt.Sscan(string(data), &n)
	}
	if add == 0 {
		return n
	}
	n += add
	_ = os.WriteFile(path, []byte(fmt.Sprint(n)), 0o644)
	return n
}

// stats counts pushes for measurements ($PICKUP_SHARED_STATS names a
// file that gets one line per push: "ok N" or "refused").
func (s *Board) stats(n int, ok bool) {
	if ok {
		s.refusals(-s.refusals(0))
	}
	line := "refused\n"
	if ok {
		line = fmt.Sprintf("ok %d\n", n)
	}
	s.statLine(line)
}

func (s *Board) statLine(line string) {
	path := os.Getenv("PICKUP_SHARED_STATS")
	if path == "" {
		return
	}
	if f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
		_, _ = f.WriteString(line)
		f.Close()
	}
}
