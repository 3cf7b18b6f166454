package sessions

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/pickup-dev/pickup/internal/fsx"
	"golang.org/x/sys/unix"
)

// EventLog appends to a board's event log through one open file, for
// callers that record many transitions (a claim.Client, a worker pool):
// opening and closing the log on every append costs as much as the append.
// The lines, their atomicity and their durability are those of
// Board.AppendEvent: each line is one atomic write(2), fsynced
// before Append returns unless the board is NoSync. Before each write it
// checks that the open file is still the one at the log's path, and opens
// the path again if the log was removed, replaced or rotated (a git
// checkout writes a new file): a line goes where opening the path for it
// would have put it.
//
// An EventLog is safe for concurrent use. When several goroutines append
// at once, one fsync covers every line written before it started, so they
// share fsyncs instead of queueing for one each. Close releases the file;
// an EventLog dropped without Close releases it when it is collected.
type EventLog struct {
	b     *Board
	path  string
	state *logState
}

// logState is what an EventLog's cleanup closes; it must not point back
// to the EventLog.
type logState struct {
	mu     sync.Mutex
	cur    *logFile // nil until the first append and after Close
	closed bool
}

// logFile is one open file of the log. Appenders hold a reference while
// they write and fsync it, so that a reopen does not close it under them.
type logFile struct {
	fd       int
	dev, ino uint64
	refs     int  // guarded by logState.mu; the logState's own reference counts too
	newFile  bool // empty when opened: its name may not be durable yet
	// atomicAppend: the filesystem makes each O_APPEND write atomic, so
	// appends need no lock (fsx.AppendIsAtomic).
	atomicAppend bool
	written      atomic.Uint64

	syncMu     sync.Mutex
	synced     uint64 // guarded by syncMu: lines up to this one are durable
	nameSynced bool   // guarded by syncMu
}

// OpenEventLog returns an EventLog for b. The file is opened (and created
// if missing) on the first append.
func (b *Board) OpenEventLog() *EventLog {
	l := &EventLog{b: b, path: b.EventLogPath(), state: &logState{}}
	runtime.AddCleanup(l, func(s *logState) { _ = s.close() }, l.state)
	return l
}

// Board returns the board the log belongs to.
func (l *EventLog) Board() *Board { return l.b }

// Record is Board.Record through l, for one or more transitions that have
// just happened, in order: it appends them (see Append) and passes each to
// the board's OnEvent with the append's error.
func (l *EventLog) Record(events ...Event) error {
	return l.writeEvents(events, true)()
}

// writeEvents is Record (with onEvent; else Append) in two steps: it
// writes the events' lines, and the func it returns makes them durable,
// passes each event to OnEvent with the error, and returns it (the
// write's, if that failed). The func must be called, once: until then the
// lines hold the log's file open. A transition writes its line while it
// holds the session's order lock (see Board.enterMoveOf) and makes it
// durable after: boardhook.WriteEvents.
func (l *EventLog) writeEvents(events []Event, onEvent bool) (commit func() error) {
	if onEvent {
		for i := range events {
			events[i] = l.b.NewEvent(events[i])
		}
	}
	done, err := l.writeLines(events)
	return func() error {
		defer func() {
			for _, w := range done {
				l.state.release(w.f)
			}
		}()
		if err == nil && !l.b.NoSync {
			err = l.syncLines(done)
		}
		if onEvent && l.b.OnEvent != nil {
			for _, e := range events {
				l.b.OnEvent(e, err)
			}
		}
		return err
	}
}

// Append appends events, like Board.AppendEvent, one line (one write(2))
// each and in order, and makes them durable with one fsync.
func (l *EventLog) Append(events ...Event) error {
	return l.writeEvents(events, false)()
}

// writtenLine is a line written to f, number seq in it; f is referenced.
type writtenLine struct {
	f   *logFile
	seq uint64
}

// writeLines writes events' lines in order; what it returns is referenced
// even on error (release each).
func (l *EventLog) writeLines(events []Event) ([]writtenLine, error) {
	var done []writtenLine
	for _, e := range events {
		line, e, err := l.b.eventLine(e)
		if err != nil {
			return done, err
		}
		f, seq, err := l.write(line)
		if err != nil {
			return done, fmt.Errorf("append event %s %s: %w", e.Op, e.ID, err)
		}
		done = append(done, writtenLine{f, seq})
	}
	return done, nil
}

// syncLines makes written lines durable. Backwards: the last line written
// to a file covers the ones before it, so one fsync serves them all (more
// only if the log was replaced in between).
func (l *EventLog) syncLines(done []writtenLine) error {
	for i := len(done) - 1; i >= 0; i-- {
		if err := done[i].f.sync(done[i].seq, l.path); err != nil {
			return fmt.Errorf("append event: %w", err)
		}
	}
	return nil
}

// write appends line under the file lock and returns the file it went to
// (referenced: release it) and the line's number in that file.
func (l *EventLog) write(line []byte) (*logFile, uint64, error) {
	s := l.state
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, 0, &os.PathError{Op: "write", Path: l.path, Err: os.ErrClosed}
	}
	for {
		if s.cur == nil {
			f, err := openLogFile(l.path)
			if err != nil {
				return nil, 0, err
			}
			s.cur = f
		}
		f := s.cur
		// Is the open file still the log? Asked before taking the lock,
		// as a fresh open would ask it (the path names a file when it is
		// opened), so the lock is held for the write alone.
		var st unix.Stat_t
		if err := unix.Lstat(l.path, &st); err != nil || uint64(st.Dev) != f.dev || uint64(st.Ino) != f.ino {
			s.cur = nil
			s.drop(f)
			if err != nil && !errors.Is(err, unix.ENOENT) {
				return nil, 0, &os.PathError{Op: "stat", Path: l.path, Err: err}
			}
			continue // removed or replaced: open the path again
		}
		if err := f.append(line, l.path); err != nil {
			// After a failed write (its erase clears and sets flags on
			// the descriptor) the next append opens the log afresh.
			s.cur = nil
			s.drop(f)
			return nil, 0, err
		}
		f.refs++
		return f, f.written.Add(1), nil
	}
}

// append writes line at the end of f in one write(2), under flock(2)
// where the filesystem does not make that write atomic by itself.
func (f *logFile) append(line []byte, path string) error {
	if f.atomicAppend {
		return writeLine(f.fd, path, line)
	}
	if err := flock(f.fd, unix.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	err := writeLine(f.fd, path, line)
	if uerr := flock(f.fd, unix.LOCK_UN); err == nil && uerr != nil {
		err = fmt.Errorf("unlock %s: %w", path, uerr)
	}
	return err
}

// sync makes line seq of f durable: one fsync covers every line written
// before it started, so a caller whose line an fsync already covered
// returns at once.
func (f *logFile) sync(seq uint64, path string) error {
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	if f.synced >= seq {
		return nil
	}
	upto := f.written.Load() // written before this fsync starts: covered
	if err := unix.Fsync(f.fd); err != nil {
		return &os.PathError{Op: "fsync", Path: path, Err: err}
	}
	if f.newFile && !f.nameSynced {
		// The file was empty when opened, perhaps just created (by us or a
		// writer that crashed before syncing): make its name durable too.
		if err := fsx.SyncDir(filepath.Dir(path)); err != nil {
			return err
		}
		f.nameSynced = true
	}
	f.synced = upto
	return nil
}

func openLogFile(path string) (*logFile, error) {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_CLOEXEC|fsx.NoFollow, 0o644)
	if err != nil {
		return nil, fsx.Explain("open", path, err, false) // a link or pipe: refused
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	return &logFile{fd: fd, dev: uint64(st.Dev), ino: uint64(st.Ino), refs: 1, newFile: st.Size == 0, atomicAppend: fsx.AppendIsAtomic(fd)}, nil
}

// drop gives up a reference to f (s.mu held) and closes it with the last.
func (s *logState) drop(f *logFile) {
	if f.refs--; f.refs == 0 {
		_ = unix.Close(f.fd)
	}
}

func (s *logState) release(f *logFile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop(f)
}

func (s *logState) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.cur != nil {
		f := s.cur
		s.cur = nil
		if f.refs == 1 {
			f.refs = 0
			return unix.Close(f.fd)
		}
		f.refs--
	}
	return nil
}

// Close closes the log's file. Appends in progress finish first; later
// ones fail.
func (l *EventLog) Close() error { return l.state.close() }
