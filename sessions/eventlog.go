package sessions

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pickup-dev/pickup/internal/fsx"
	"golang.org/x/sys/unix"
)

// EventLogFile is the board's history, <board>/events.log: one JSON object
// per line and per transition, oldest first. It is committed with the
// board; the board's .gitattributes marks it merge=union, so a merge or a
// rebase of two branches that both appended to it keeps the lines of both
// and never conflicts.
const EventLogFile = "events.log"

// maxReason bounds an event's reason, so that every line stays far below
// 4 KiB and is written by one write(2).
const maxReason = 1024

// Event is one line of the event log: a session moved (or was created).
type Event struct {
	Time time.Time `json:"time"`
	ID   string    `json:"id"`
	// Op is what moved it: new, claim, next (a claim by pickup next),
	// release (also a failed run of pickup work), done, reopen, requeue,
	// "set aside", reap, doctor.
	Op string `json:"op"`
	// From and To are where the session was and is, relative to the board:
	// "todo", "doing/<owner>", "done", "failed"; From is empty for a new
	// session. A destination whose file is not named <id>.md (doctor moving
	// a copy to conflicts/) is given as the file's board-relative path.
	From string `json:"from"`
	To   string `json:"to"`
	// Owner is who made the transition (for reap: whose claim was reaped).
	Owner  string `json:"owner,omitempty"`
	Reason string `json:"reason,omitempty"`

	// Src and Dst are the absolute paths of the move. They are not logged:
	// Record derives From and To from them, and OnEvent hooks (commit
	// mode) use them to know which files changed.
	Src string `json:"-"`
	Dst string `json:"-"`
}

// BadLine is a line of the event log that is not an event: torn by a crash
// of a writer whose append was not synced, or edited by hand. Readers skip
// it and report it.
type BadLine struct {
	Line int    `json:"line"`
	Text string `json:"text"` // the start of the line, at most 80 bytes

	// off and n locate the bad bytes in the log (doctor erases torn ones).
	off int64
	n   int
}

// EventLogPath returns <board>/events.log.
func (b *Board) EventLogPath() string { return filepath.Join(b.Dir, EventLogFile) }

// place names a session file's place relative to the board: its directory
// ("todo", "doing/alice") when the file is <id>.md, else the file itself.
func (b *Board) place(path, id string) string {
	if path == "" {
		return ""
	}
	target := path
	if filepath.Base(path) == id+".md" {
		target = filepath.Dir(path)
	}
	rel, err := filepath.Rel(b.Dir, target)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(target)
	}
	return filepath.ToSlash(rel)
}

// NewEvent completes e for logging: the time (now, if zero) and From and To
// from Src and Dst when they are empty.
func (b *Board) NewEvent(e Event) Event {
	if e.Time.IsZero() {
		e.Time = b.now()
	}
	e.Time = e.Time.UTC()
	if e.From == "" {
		e.From = b.place(e.Src, e.ID)
	}
	if e.To == "" {
		e.To = b.place(e.Dst, e.ID)
	}
	return e
}

// AppendEvent appends one event to the board's event log (completing it
// with NewEvent). Any number of processes may append at once: the file is
// opened O_APPEND and the line is written with a single write(2), which
// on a local filesystem moves to the end and writes in one atomic step
// (elsewhere the writer holds flock(2) on the file around it: see
// fsx.AppendIsAtomic), so lines are never interleaved. A write that the
// system cuts short (a full disk) is blanked out in place and fails with
// TornLineError. (A line that a crash cut short gets the next line glued
// to it; readers recover that line, see ReadEvents, and doctor erases the
// fragment.)
// The log is fsynced unless the board is NoSync. A caller that records
// many transitions uses an EventLog, which keeps the file open.
func (b *Board) AppendEvent(e Event) error {
	line, e, err := b.eventLine(e)
	if err != nil {
		return err
	}
	if err := appendLine(b.EventLogPath(), line, !b.NoSync); err != nil {
		return fmt.Errorf("append event %s %s: %w", e.Op, e.ID, err)
	}
	return nil
}

// appendEventUnsynced is AppendEvent without the fsync, for a line that
// records a transition whose durable record is elsewhere (a board that
// mirrors a database writes the transitions other machines made: the
// database's history is the record; a crash that loses the line loses
// nothing else). Only an arbiter does that: boardhook.AppendEventUnsynced.
func (b *Board) appendEventUnsynced(e Event) error {
	line, e, err := b.eventLine(e)
	if err != nil {
		return err
	}
	if err := appendLine(b.EventLogPath(), line, false); err != nil {
		return fmt.Errorf("append event %s %s: %w", e.Op, e.ID, err)
	}
	return nil
}

// eventLine completes e with NewEvent, checks it and encodes its line.
func (b *Board) eventLine(e Event) ([]byte, Event, error) {
	e = b.NewEvent(e)
	if err := ValidateID(e.ID); err != nil {
		return nil, e, fmt.Errorf("append event: %w", err)
	}
	if e.Owner != "" {
		if err := ValidateOwner(e.Owner); err != nil {
			return nil, e, fmt.Errorf("append event: %w", err)
		}
	}
	e.Reason = truncateUTF8(e.Reason, maxReason)
	line, err := marshalEvent(e)
	if err != nil {
		return nil, e, fmt.Errorf("append event: %w", err)
	}
	return append(line, '\n'), e, nil
}

// marshalEvent is json.Marshal(e), byte for byte (TestMarshalEvent), built
// field by field: encoding/json's first use of a struct type inspects its
// fields and builds an encoder for it, in every pickup process that moves
// a session.
func marshalEvent(e Event) ([]byte, error) {
	t, err := e.Time.MarshalJSON()
	if err != nil {
		return json.Marshal(e) // its error, as it words it
	}
	b := make([]byte, 0, 96+len(e.ID)+len(e.From)+len(e.To)+len(e.Owner)+len(e.Reason))
	b = append(append(b, `{"time":`...), t...)
	b = appendJSONField(b, `,"id":`, e.ID)
	b = appendJSONField(b, `,"op":`, e.Op)
	b = appendJSONField(b, `,"from":`, e.From)
	b = appendJSONField(b, `,"to":`, e.To)
	if e.Owner != "" {
		b = appendJSONField(b, `,"owner":`, e.Owner)
	}
	if e.Reason != "" {
		b = appendJSONField(b, `,"reason":`, e.Reason)
	}
	return append(b, '}'), nil
}

// appendJSONField appends key and s as a JSON string, escaped as
// json.Marshal escapes it.
func appendJSONField(b []byte, key, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(append(b, key...), q...)
}

func appendLine(path string, line []byte, sync bool) (err error) {
	// Raw system calls: this runs on every transition, and os.File's
	// poller registration would double its cost.
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_CLOEXEC|fsx.NoFollow, 0o644)
	if err != nil {
		return fsx.Explain("open", path, err, false) // a link or pipe: refused
	}
	defer func() {
		if cerr := unix.Close(fd); err == nil && cerr != nil {
			err = &os.PathError{Op: "close", Path: path, Err: cerr}
		}
	}()
	// O_APPEND puts each write at the end, and one write(2) of a short
	// line is not interleaved with others on a local filesystem; the lock
	// makes sure of it where a filesystem would split writes. Closing the
	// file releases it.
	if !fsx.AppendIsAtomic(fd) {
		if err := flock(fd, unix.LOCK_EX); err != nil {
			return fmt.Errorf("lock %s: %w", path, err)
		}
	}
	if err := writeLine(fd, path, line); err != nil {
		return err
	}
	if sync {
		if err := unix.Fsync(fd); err != nil {
			return &os.PathError{Op: "fsync", Path: path, Err: err}
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err == nil && st.Size == int64(len(line)) {
			// The file is new: make its name durable too.
			if err := fsx.SyncDir(filepath.Dir(path)); err != nil {
				return err
			}
		}
	}
	return nil
}

func flock(fd, how int) error {
	for {
		err := unix.Flock(fd, how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

func writeLine(fd int, path string, line []byte) error {
	n, err := unix.Write(fd, line)
	if err != nil {
		return &os.PathError{Op: "write", Path: path, Err: err}
	}
	if n != len(line) {
		// Cut short (a full disk): never leave the partial line.
		return eraseShortWrite(fd, path, n, len(line))
	}
	return nil
}

// Events returns the events of session id from the board's event log, in
// the order of the file (after a merge that is not always time order), or
// every event if id is empty. Lines that are not events are skipped and
// returned as bad lines, except a last line without its newline, which may
// be an append in progress. A board without a log has no events.
func (b *Board) Events(id string) ([]Event, []BadLine, error) {
	if id != "" {
		if err := ValidateID(id); err != nil {
			return nil, nil, err
		}
	}
	f, err := fsx.OpenRegular(b.EventLogPath()) // never a link's target
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return ReadEvents(f, id)
}

// ReadEvents reads an event log from r; see Board.Events.
func ReadEvents(r io.Reader, id string) ([]Event, []BadLine, error) {
	var events []Event
	var bad []BadLine
	quoted := []byte(`"` + id + `"`)
	br := bufio.NewReaderSize(r, 64*1024)
	var off, next int64 // where this line and the next begin
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		off, next = next, next+int64(len(line))
		if len(line) == 0 && err == io.EOF {
			break
		}
		if err != nil && err != io.EOF {
			return events, bad, err
		}
		complete := err == nil
		text := bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(text)) == 0 {
			if err == io.EOF {
				break
			}
			continue
		}
		e, ok := parseEvent(text, id, quoted)
		if !ok && complete {
			// A line cut short by a crash, with the next writer's line glued
			// to it: report the torn part, keep the event after it.
			if i := bytes.Index(text[1:], eventStart); i >= 0 {
				if e2, ok2 := parseEvent(text[i+1:], id, quoted); ok2 {
					bad = append(bad, BadLine{Line: n, Text: truncateUTF8(string(text[:i+1]), 80), off: off, n: i + 1})
					e, ok = e2, true
				}
			}
			if !ok {
				bad = append(bad, BadLine{Line: n, Text: truncateUTF8(string(text), 80), off: off, n: len(text)})
			}
		}
		// !ok && !complete: the last line, still being written (or torn at
		// the very end): skipped.
		if ok && (id == "" || e.ID == id) {
			events = append(events, e)
		}
		if err == io.EOF {
			break
		}
	}
	return events, bad, nil
}

// eventStart begins every line AppendEvent writes (json.Marshal escapes the
// quotes of any such text inside a string).
var eventStart = []byte(`{"time":`)

// parseEvent parses one line. Lines of other sessions than id (when id is
// set) are only checked for being JSON objects, and return ok with a zero
// Event.
func parseEvent(text []byte, id string, quoted []byte) (Event, bool) {
	var e Event
	if id == "" || bytes.Contains(text, quoted) {
		return e, json.Unmarshal(text, &e) == nil && validEvent(e)
	}
	t := bytes.TrimSpace(text)
	return Event{}, json.Valid(t) && bytes.HasPrefix(t, []byte("{"))
}

func validEvent(e Event) bool {
	return !e.Time.IsZero() && ValidateID(e.ID) == nil && e.To != ""
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 {
		r, size := utf8.DecodeLastRuneInString(s)
		if r != utf8.RuneError || size != 1 {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}

// Files that `pickup init` writes at the top of the board, so that git
// never commits runtime files and merges of the event log never conflict.
const (
	// GitignoreFile keeps machine-local files out of git.
	GitignoreFile = ".gitignore"
	// GitattributesFile makes the append-only event log merge by union.
	GitattributesFile = ".gitattributes"
)

// gitignoreContent is the board's .gitignore.
const gitignoreContent = `# pickup: machine-local runtime files (caches, leases, locks, id
# reservations) and temporary files of interrupted writes. Never commit them.
/.pickup/
.*.md[0-9]*
`

// gitattributesContent is the board's .gitattributes.
const gitattributesContent = `# pickup: the event log is append-only; a merge or rebase keeps the lines of
# both sides instead of conflicting.
/events.log merge=union
`

// writeGitFiles writes the board's .gitignore and .gitattributes unless
// they exist (a user's version is never replaced).
func writeGitFiles(dir string, sync bool) error {
	for _, f := range []struct{ name, content string }{
		{GitignoreFile, gitignoreContent},
		{GitattributesFile, gitattributesContent},
	} {
		err := fsx.WriteNew(filepath.Join(dir, f.name), []byte(f.content), 0o644, sync)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}
