package postgres

import "encoding/json"

// The line protocol between pickup and its helper, pickup-postgres: one
// JSON object per line each way, a request then its response, in turn.

// Request is one line from pickup to the helper.
type Request struct {
	// Op: "open" (connect to URL and migrate the schema), "state" (every
	// session's place and version), "bodies" (the content of IDs),
	// "move" (one transition), "import" (Sessions, each inserted unless
	// its id exists).
	Op  string `json:"op"`
	URL string `json:"url,omitempty"`
	// Owner: whose heartbeat a "beat" records; Host the machine it
	// comes from.
	Owner string `json:"owner,omitempty"`
	Host  string `json:"host,omitempty"`
	// Board and Holders: a "beat" records the processes of Owner's lease
	// on this board (its id suffix) too, when Holders is not empty. A
	// "state" with Host reads the lease processes that boards of that
	// machine recorded (Response.Holders).
	Board   string          `json:"board,omitempty"`
	Holders json.RawMessage `json:"holders,omitempty"`
	// TimeoutMS: how long a "wait" (for a session arriving in todo on
	// any board of the database: LISTEN/NOTIFY) may block.
	TimeoutMS int `json:"timeout_ms,omitempty"`
	// Moves: the "wait" returns at any transition on any board (the
	// database's version moved past Since), not only at an arrival in
	// todo; the response's Version is the version it saw.
	Moves bool  `json:"moves,omitempty"`
	Since int64 `json:"since,omitempty"`
	// State: an "open" answers with the "state" too (one round trip).
	State bool `json:"state,omitempty"`
	// Horizon: a "state" gives only the sessions written by
	// transactions from this one on (the Through of an earlier state; 0:
	// every session).
	Horizon int64 `json:"horizon,omitempty"`
	// Bodies: a "state" from a Horizon gives each session's content too
	// (a state read whole never does: "bodies" reads what it needs).
	Bodies bool     `json:"bodies,omitempty"`
	IDs    []string `json:"ids,omitempty"`
	// Move is the transition of a "move".
	Move *Move `json:"move,omitempty"`
	// Sessions are the sessions of an "import".
	Sessions []Row `json:"sessions,omitempty"`
	// Lock is the named lock of a "lock", "unlock", "lockbeat" or
	// "locks" (see locks.go).
	Lock *LockRequest `json:"lock,omitempty"`
	// Channel: what a "wait" waits for: "" a session arriving in todo,
	// "locks" a named lock released.
	Channel string `json:"channel,omitempty"`

	// The history in git (history.go). HistoryEveryMS: an "open" or
	// "state" also says whether a history push is due (HistoryDue), and
	// if so takes the turn for this process (the pushes' interval runs
	// from then). "history_begin" makes this connection the one pusher
	// (Busy if another is); Force pushes even if the interval has not
	// passed (pickup sync, or the process that took the turn).
	// "history_batch" reads the events not yet pushed and the board as
	// it is, in one snapshot; "history_mark" records that Seqs are on
	// the branch (Pushed: by a push of this process, whose commit is
	// Tip); "history_end" lets another pusher go; "history_info" says
	// how the history stands.
	HistoryEveryMS int64   `json:"history_every_ms,omitempty"`
	Force          bool    `json:"force,omitempty"`
	Seqs           []int64 `json:"seqs,omitempty"`
	Tip            string  `json:"tip,omitempty"`
	Pushed         bool    `json:"pushed,omitempty"`
	// Rewound: a "history_mark" that found the branch without the tip
	// the last push left there also marks not pushed every event after
	// After (the newest the branch lists), and records Tip ("" for a
	// deleted branch) as the branch's tip; the response's Repushed says
	// how many it marked not pushed.
	Rewound bool  `json:"rewound,omitempty"`
	After   int64 `json:"after,omitempty"`
	// DeadlineMS: what is left of the command's network deadline
	// (retry.go); the helper gives the request no longer than that (nor
	// than its own RequestTimeout). 0: its own.
	DeadlineMS int64 `json:"deadline_ms,omitempty"`
}

// Event is one transition of pickup_events, for the history in git.
type Event struct {
	Seq    int64  `json:"seq"`
	At     string `json:"at"` // RFC 3339, the server's clock
	ID     string `json:"id"`
	Op     string `json:"op"`
	Src    string `json:"src,omitempty"`
	Dst    string `json:"dst,omitempty"`
	Owner  string `json:"owner,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// HistoryInfo is how a board's history in git stands.
type HistoryInfo struct {
	Pending   int64  `json:"pending"`              // events not yet pushed
	AttemptAt string `json:"attempt_at,omitempty"` // the last push's start
	PushedAt  string `json:"pushed_at,omitempty"`  // the last push that landed
	PushedAgo int64  `json:"pushed_ago_ms,omitempty"`
	Leader    string `json:"leader,omitempty"` // who made the last attempt
	Tip       string `json:"tip,omitempty"`
	Pushes    int64  `json:"pushes"`
}

// Move is one transition: the session ID goes from (FromState,
// FromOwner) to (ToState, ToOwner) with Body as its new content; a new
// session has FromState "". Tx names the transaction, so that a commit
// whose outcome was not heard can be read back.
type Move struct {
	ID        string `json:"id"`
	Op        string `json:"op"`
	FromState string `json:"from_state"`
	FromOwner string `json:"from_owner,omitempty"`
	ToState   string `json:"to_state"`
	ToOwner   string `json:"to_owner,omitempty"`
	Owner     string `json:"owner,omitempty"` // who made it
	Host      string `json:"host,omitempty"`  // the machine it was made on
	Reason    string `json:"reason,omitempty"`
	Body      []byte `json:"body"`
	Tx        string `json:"tx"`
	// Again: this transition was sent before under the same Tx, and its
	// outcome was not heard (retry.go): a compare-and-swap that finds the
	// session moved looks for the event row of Tx, and answers OK (with
	// ReadBack) if the earlier attempt committed.
	Again bool `json:"again,omitempty"`
	// Board and Holders: the board it was made on (its id suffix) and
	// the processes of the lease of Owner there, as JSON ([]proc.Process;
	// empty: not known), recorded in pickup_holders.
	Board   string          `json:"board,omitempty"`
	Holders json.RawMessage `json:"holders,omitempty"`
}

// OwnerHolders is the processes of an owner's lease on one board, as the
// database has them.
type OwnerHolders struct {
	Owner   string          `json:"owner"`
	Board   string          `json:"board"`
	Holders json.RawMessage `json:"holders"`
}

// Row is a session as the database has it.
type Row struct {
	ID      string `json:"id"`
	State   string `json:"state"`
	Owner   string `json:"owner,omitempty"`
	Version int64  `json:"version"`
	Fence   int64  `json:"fence,omitempty"`
	// LastOp and LastBy: the transition that put it there, and who made
	// it (a session that left an owner's hands by another's: fenced).
	LastOp string `json:"last_op,omitempty"`
	LastBy string `json:"last_by,omitempty"`
	Body   []byte `json:"body,omitempty"`
	// Txid: the transaction that last wrote it (a state's rows).
	Txid int64 `json:"x,omitempty"`
}

// Failure kinds of a Response.
const (
	// KindUnreachable: the database could not be reached or dropped the
	// connection before the transition was committed: nothing changed.
	KindUnreachable = "unreachable"
	// KindUnknown: the connection was lost while the commit was under
	// way, and reading it back failed too: it may or may not stand.
	KindUnknown = "unknown"
	// KindError: the database answered with an error (permissions, a
	// schema newer than this pickup, ...).
	KindError = "error"
)

// Response is one line from the helper to pickup.
type Response struct {
	OK   bool   `json:"ok,omitempty"`
	Kind string `json:"kind,omitempty"` // a failure's kind
	Err  string `json:"err,omitempty"`
	// Lost: a move found the session elsewhere (or, for a new one, its id
	// taken); Found and Row say where the database has it.
	Lost  bool  `json:"lost,omitempty"`
	Found bool  `json:"found,omitempty"`
	Row   *Row  `json:"row,omitempty"`  // a move's session after it, or where it is
	Rows  []Row `json:"rows,omitempty"` // state, bodies
	// Beats: the state's owners' heartbeats; Holders: the lease
	// processes that boards of the request's Host recorded.
	Beats   []Beat         `json:"beats,omitempty"`
	Holders []OwnerHolders `json:"holders,omitempty"`
	Count   int            `json:"count,omitempty"` // import: how many were new; history_mark: how many it marked
	// Repushed: the events a rewound "history_mark" marked not pushed.
	Repushed int `json:"repushed,omitempty"`
	// Through: a state's horizon: every transaction before it was
	// committed (or rolled back) when the state was read, so a later
	// state from it on (Horizon) misses no change.
	Through int64 `json:"through,omitempty"`
	// IDs: an import's sessions whose ids the database has for a
	// different session.
	IDs []string `json:"ids,omitempty"`
	// Lock: a lock request's holder (the new one, or the one that keeps
	// it); Locks: a "locks" request's.
	Lock  *LockRow  `json:"lock_row,omitempty"`
	Locks []LockRow `json:"locks,omitempty"`
	// Version: the database's version as a "wait" with Moves saw it.
	Version int64 `json:"version,omitempty"`
	// HistoryDue: a history push is due and this process took the turn.
	HistoryDue bool `json:"history_due,omitempty"`
	// Busy: another process is pushing the history.
	Busy    bool         `json:"busy,omitempty"`
	Events  []Event      `json:"events,omitempty"`
	History *HistoryInfo `json:"history,omitempty"`
	// ReadBack: a move's commit was not heard and its outcome was read
	// back from the database.
	ReadBack bool `json:"read_back,omitempty"`
	// Retried: this process sent the request more than once (set here,
	// not on the wire: retry.go).
	Retried bool `json:"-"`
}

// Beat is an owner's last heartbeat in the database: when (the server's
// clock) and how long ago (judged there).
type Beat struct {
	Owner string `json:"owner"`
	// Host is the machine the heartbeat came from ("" if not known: a
	// pickup that did not say).
	Host  string `json:"host,omitempty"`
	At    string `json:"at"`
	AgeMS int64  `json:"age_ms"`
}
