package pgboard

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
	// Owner: whose heartbeat a "beat" records.
	Owner string `json:"owner,omitempty"`
	// TimeoutMS: how long a "wait" (for a session arriving in todo on
	// any board of the database: LISTEN/NOTIFY) may block.
	TimeoutMS int `json:"timeout_ms,omitempty"`
	// State: an "open" answers with the "state" too (one round trip).
	State bool `json:"state,omitempty"`
	// Since: a "state" gives only the sessions written by transactions
	// from this one on (the Through of an earlier state; 0: every
	// session).
	Since int64 `json:"since,omitempty"`
	// Bodies: a "state" from Since gives each session's content too
	// (a state read whole never does: "bodies" reads what it needs).
	Bodies bool     `json:"bodies,omitempty"`
	IDs    []string `json:"ids,omitempty"`
	// Move is the transition of a "move".
	Move *Move `json:"move,omitempty"`
	// Sessions are the sessions of an "import".
	Sessions []Row `json:"sessions,omitempty"`
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
	Reason    string `json:"reason,omitempty"`
	Body      []byte `json:"body"`
	Tx        string `json:"tx"`
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
	// Beats: the state's owners' heartbeats.
	Beats []Beat `json:"beats,omitempty"`
	Count int    `json:"count,omitempty"` // import: how many were new
	// Through: a state's horizon: every transaction before it was
	// committed (or rolled back) when the state was read, so a later
	// state from it on (Since) misses no change.
	Through int64 `json:"through,omitempty"`
	// IDs: an import's sessions whose ids the database has for a
	// different session.
	IDs []string `json:"ids,omitempty"`
	// ReadBack: a move's commit was not heard and its outcome was read
	// back from the database.
	ReadBack bool `json:"read_back,omitempty"`
}

// Beat is an owner's last heartbeat in the database: when (the server's
// clock) and how long ago (judged there).
type Beat struct {
	Owner string `json:"owner"`
	At    string `json:"at"`
	AgeMS int64  `json:"age_ms"`
}
