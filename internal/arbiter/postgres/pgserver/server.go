// Package pgserver is the database side of a PostgreSQL board: it serves
// pgboard's line protocol (see postgres.Request) over one connection made
// with pgx. Only the helper command pickup-postgres links it (and so
// package net); pickup itself never does.
package pgserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/pickup-dev/pickup/internal/arbiter/postgres"
)

// Deadlines. A request that the server does not answer in RequestTimeout
// fails as unreachable (a stalled connection is not waited on forever);
// the outcome of a commit that was not heard is read back for up to
// ReadBackFor while the server restarts.
const (
	ConnectTimeout = 5 * time.Second
	RequestTimeout = 15 * time.Second
	ReadBackFor    = 20 * time.Second
)

// Server holds one connection to the database.
type Server struct {
	url  string
	conn *pgx.Conn
	// listening: conn runs LISTEN (a daemon does not pool it).
	listening bool
	// historyHeld: conn holds the history pusher's advisory lock.
	historyHeld bool
}

// notifyChannel is the channel of NOTIFY: a session arrived in todo.
const notifyChannel = "pickup_todo"

// movesPoll is how often a wait for any transition reads the database's
// version. Transitions other than arrivals in todo send no NOTIFY: a
// NOTIFY serializes the commits of the transactions that send one (each
// holds the database's notify lock until its commit is flushed: pgbench,
// 16 clients, fsync on, PostgreSQL 15: an UPDATE of one row 13,500 tps,
// with a pg_notify 1,600-3,400), and claims are the path whose
// throughput matters. One read of a sequence a
// few times a second per live board costs the server next to nothing.
const movesPoll = 200 * time.Millisecond

// wait blocks until a NOTIFY on notifyChannel arrives or d has passed
// (both are an answer: the caller reads the board either way). With
// moves it returns as soon as the database's version differs from since
// (any transition on any board), reading it every movesPoll, and at once
// at a NOTIFY. channel: what it listens to ("" arrivals in todo,
// postgres.LockChannel released locks).
func (s *Server) wait(channel string, d time.Duration, moves bool, since int64) postgres.Response {
	listen := notifyChannel
	if channel == postgres.LockChannel {
		listen = lockChannel
	}
	ctx, cancel := context.WithTimeout(context.Background(), ConnectTimeout)
	defer cancel()
	if err := s.connect(ctx); err != nil {
		return fail(err)
	}
	if !s.listening {
		if _, err := s.conn.Exec(ctx, "LISTEN "+listen); err != nil {
			return fail(s.dropIfBroken(err))
		}
		s.listening = true
	}
	deadline := time.Now().Add(d)
	var version int64
	for {
		if moves {
			qctx, qcancel := context.WithTimeout(context.Background(), RequestTimeout)
			err := s.conn.QueryRow(qctx, `SELECT last_value FROM pickup_version`).Scan(&version)
			qcancel()
			if err != nil {
				return fail(s.dropIfBroken(err))
			}
			if version != since {
				return postgres.Response{OK: true, Version: version}
			}
		}
		step := time.Until(deadline)
		if moves {
			step = min(step, movesPoll)
		}
		if step <= 0 {
			return postgres.Response{OK: true, Version: version}
		}
		// The read's deadline is set on the socket itself, right before
		// it: bounded by a context instead (a deadline that pgx sets from
		// another goroutine once the context is done), a wait after a
		// server restart once blocked for good, which left a live board
		// showing a board that no longer moved.
		nc := s.conn.PgConn().Conn()
		if err := nc.SetReadDeadline(time.Now().Add(step)); err != nil {
			return fail(s.dropIfBroken(err))
		}
		_, err := s.conn.WaitForNotification(context.Background())
		expired := pgconn.Timeout(err)
		if !s.conn.IsClosed() {
			_ = nc.SetReadDeadline(time.Time{})
		}
		if err != nil && !expired {
			return fail(s.dropIfBroken(err))
		}
		if !moves {
			return postgres.Response{OK: true}
		}
		// A NOTIFY, a step or the deadline: read the version again.
	}
}

// Serve answers requests from r on w until r ends, on a connection of its
// own.
func Serve(r io.Reader, w io.Writer) error {
	s := &Server{}
	defer s.close()
	return Serve2(s, r, w)
}

// Serve2 is Serve on s's connection (a daemon's pooled one), which it
// leaves open.
func Serve2(s *Server, r io.Reader, w io.Writer) error {
	// A pusher that goes away without history_end (killed) must not leave
	// the lock on a pooled connection.
	defer func() {
		if s.historyHeld {
			ctx, cancel := context.WithTimeout(context.Background(), ConnectTimeout)
			s.historyEnd(ctx)
			cancel()
		}
	}()
	in := bufio.NewScanner(r)
	in.Buffer(make([]byte, 64<<10), 256<<20)
	out := bufio.NewWriter(w)
	enc := json.NewEncoder(out)
	for in.Scan() {
		var req postgres.Request
		var res postgres.Response
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			res = postgres.Response{Kind: postgres.KindError, Err: fmt.Sprintf("bad request: %v", err)}
		} else {
			res = s.handle(&req)
		}
		if err := enc.Encode(&res); err != nil {
			return err
		}
		if err := out.Flush(); err != nil {
			return err
		}
	}
	return in.Err()
}

func (s *Server) close() {
	if s.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = s.conn.Close(ctx)
		cancel()
		s.conn = nil
		s.listening = false
		s.historyHeld = false
	}
}

func (s *Server) handle(req *postgres.Request) postgres.Response {
	limit := RequestTimeout
	if d := time.Duration(req.DeadlineMS) * time.Millisecond; d > 0 && d < limit {
		limit = d // what is left of the command's network deadline
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	switch req.Op {
	case "open":
		if s.url != req.URL {
			s.close()
			s.url = req.URL
		}
		res := s.retry(ctx, func() postgres.Response {
			// Every open checks the schema version (one query when it
			// is current), a pooled connection too: a database that a
			// newer pickup migrated meanwhile is refused at once.
			if err := migrate(ctx, s.conn); err != nil {
				return fail(s.dropIfBroken(err))
			}
			return postgres.Response{OK: true}
		})
		if res.OK && req.State {
			return s.withHistoryDue(ctx, req, s.state(ctx, req.Horizon, req.Bodies, req.Host))
		}
		return res
	case "state":
		return s.withHistoryDue(ctx, req, s.retry(ctx, func() postgres.Response { return s.state(ctx, req.Horizon, req.Bodies, req.Host) }))
	case "history_begin":
		return s.retry(ctx, func() postgres.Response { return s.historyBegin(ctx, req) })
	case "history_end":
		return s.historyEnd(ctx)
	case "history_batch":
		return s.retry(ctx, func() postgres.Response { return s.historyBatch(ctx) })
	case "history_mark":
		return s.retry(ctx, func() postgres.Response { return s.historyMark(ctx, req) })
	case "history_info":
		return s.retry(ctx, func() postgres.Response { return s.historyInfo(ctx) })
	case "bodies":
		return s.retry(ctx, func() postgres.Response { return s.bodies(ctx, req.IDs) })
	case "import":
		return s.retry(ctx, func() postgres.Response { return s.importRows(ctx, req.Sessions) })
	case "beat":
		return s.retry(ctx, func() postgres.Response { return s.beat(ctx, req.Owner, req.Host, req.Board, req.Holders) })
	case "wait":
		return s.wait(req.Channel, time.Duration(req.TimeoutMS)*time.Millisecond, req.Moves, req.Since)
	case "lock", "unlock", "lockbeat", "locks", "supersede":
		if req.Lock == nil {
			return postgres.Response{Kind: postgres.KindError, Err: req.Op + " without a lock"}
		}
		return s.retry(ctx, func() postgres.Response {
			switch req.Op {
			case "lock":
				return s.lock(ctx, req.Lock)
			case "unlock":
				return s.unlock(ctx, req.Lock)
			case "lockbeat":
				return s.lockBeat(ctx, req.Lock)
			case "supersede":
				return s.supersede(ctx, req.Lock)
			}
			return s.locks(ctx, req.Lock.Key)
		})
	case "move":
		if req.Move == nil {
			return postgres.Response{Kind: postgres.KindError, Err: "move without a transition"}
		}
		return s.move(ctx, req.Move)
	}
	return postgres.Response{Kind: postgres.KindError, Err: fmt.Sprintf("unknown request %q", req.Op)}
}

// withHistoryDue adds to a state's answer whether a history push is due
// (when the request asks).
func (s *Server) withHistoryDue(ctx context.Context, req *postgres.Request, res postgres.Response) postgres.Response {
	if res.OK && req.HistoryEveryMS > 0 && s.conn != nil {
		res.HistoryDue = s.historyDue(ctx, time.Duration(req.HistoryEveryMS)*time.Millisecond, req.Owner)
	}
	return res
}

// connect makes the connection if there is none.
func (s *Server) connect(ctx context.Context) error {
	if s.conn != nil && !s.conn.IsClosed() {
		return nil
	}
	if s.url == "" {
		return &failure{kind: postgres.KindError, err: errors.New("not opened")}
	}
	cfg, err := pgx.ParseConfig(s.url)
	if err != nil {
		return &failure{kind: postgres.KindError, err: err}
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = ConnectTimeout
	}
	// A deadline that passes unblocks the read and leaves the connection
	// open (a wait that timed out is no failure); the default would send
	// the server a cancel request on a connection of its own.
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return &failure{kind: connectFailure(err), err: err}
	}
	// A new backend: a LISTEN or an advisory lock of the one before (a
	// connection pgx closed on a fatal error) is not on it.
	s.conn, s.listening, s.historyHeld = conn, false, false
	return nil
}

// connectFailure is the kind of a failed connection: an answer that no
// wait will change (a password refused, no such database, no
// permission) is KindError; anything else (refused, reset, a server
// starting up or shutting down, TLS refused while it starts, too many
// connections) is KindUnreachable, which pickup rides over until its
// network deadline.
func connectFailure(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "28"), pe.Code == "3D000", pe.Code == "42501", strings.HasPrefix(pe.Code, "0A"):
			return postgres.KindError
		}
	}
	return postgres.KindUnreachable
}

// failure is an error with its kind.
type failure struct {
	kind string
	err  error
}

func (f *failure) Error() string { return f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

func fail(err error) postgres.Response {
	var f *failure
	if errors.As(err, &f) {
		return postgres.Response{Kind: f.kind, Err: f.Error()}
	}
	return postgres.Response{Kind: postgres.KindError, Err: err.Error()}
}

// broken reports whether err is the connection's failure, not the
// database's answer.
func broken(err error) bool {
	if errors.Is(err, pgx.ErrNoRows) {
		return false // an answer: the connection is fine
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// The server going away answers with these before it closes.
		switch pe.Code {
		case "57P01", "57P02", "57P03", "08000", "08003", "08006":
			return true
		}
		return false
	}
	return err != nil
}

// dropIfBroken closes a connection that err broke, so that the next
// request connects again, and marks err unreachable.
func (s *Server) dropIfBroken(err error) error {
	if err == nil {
		return nil
	}
	var f *failure
	if errors.As(err, &f) {
		return err
	}
	if broken(err) {
		s.close()
		return &failure{kind: postgres.KindUnreachable, err: err}
	}
	return &failure{kind: postgres.KindError, err: err}
}

// retry runs a read (or an idempotent write) once more on a new connection
// when the first one was broken: a server restart or a terminated backend
// between two requests costs a reconnection, not a failure.
func (s *Server) retry(ctx context.Context, f func() postgres.Response) postgres.Response {
	for try := 0; ; try++ {
		if err := s.connect(ctx); err != nil {
			return fail(err)
		}
		res := f()
		if res.Kind != postgres.KindUnreachable || try == 1 {
			return res
		}
	}
}
