package sessions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/internal/fsx"
)

// maxSameSecond bounds how many sessions one second can hold.
const maxSameSecond = 100000

// Create writes a new session in todo/ and returns it. Its id is the UTC
// creation time, YYYY-MM-DD_HH-mm-ss, with a suffix (-2, -3, ...) when that
// second already has a session. Two processes creating sessions in the same
// second never get the same id: each id is first reserved by an exclusive
// create under .pickup/ids, and the file itself is published exclusively.
// If m.CreatedAt is zero it is set to now.
func (b *Board) Create(m Meta, body []byte) (Session, error) {
	return b.CreateAs("", m, body)
}

// CreateAs is Create recording by (a person's name, an owner) as who made
// the session in its "new" event.
func (b *Board) CreateAs(by string, m Meta, body []byte) (Session, error) {
	now := b.now()
	if m.CreatedAt.IsZero() {
		m.CreatedAt = now.Truncate(time.Second)
	}
	for _, dep := range m.DependsOn {
		if err := ValidateID(dep); err != nil {
			return Session{}, fmt.Errorf("depends_on: %w", err)
		}
	}
	return b.publish(now, by, m, Render(m, body))
}

// publish writes content, a whole session file whose frontmatter says m,
// as a new session in todo/ named after now (see Create).
func (b *Board) publish(now time.Time, by string, m Meta, content []byte) (Session, error) {
	if err := b.checkArbiter(); err != nil {
		return Session{}, fmt.Errorf("create session: %w", err)
	}
	hour := now.Format("2006-01-02_15")
	resDir := filepath.Join(b.RuntimeDir(), "ids", hour)
	// The hour's directory must be the board's own, not a link; so must
	// todo/, which a clone may lack (it holds no files there yet).
	if err := b.CheckDir(RuntimeDirName + "/ids/" + hour); err != nil {
		return Session{}, fmt.Errorf("create session: %w", err)
	}
	for _, d := range []string{resDir, b.StateDir(Todo, "")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return Session{}, fmt.Errorf("create session: %w", err)
		}
	}
	b.forgetOldReservations(now)
	suffix := b.idSuffixOf()
	for n := 0; n < maxSameSecond; n++ {
		id := idCandidateWith(now, n, suffix)
		places, err := b.Locate(id)
		if err != nil {
			return Session{}, fmt.Errorf("create session: %w", err)
		}
		if len(places) > 0 {
			continue
		}
		f, err := os.OpenFile(filepath.Join(resDir, id), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return Session{}, fmt.Errorf("reserve id %s: %w", id, err)
		}
		f.Close()
		path := b.Path(Todo, "", id)
		// Not while a sync rewrites todo/; and, with no arbiter to keep
		// the log, the "new" line is written before a claim of the new
		// session can be (see enterMoveOf).
		leave, err := b.enterMoveOf(id)
		if err != nil {
			return Session{}, fmt.Errorf("create session: %w", err)
		}
		err = fsx.WriteNew(path, content, 0o644, !b.NoSync)
		e := Event{Op: "new", ID: id, Owner: by, Dst: path}
		var commit func() error
		if err == nil && b.arbiterOf() == nil {
			l := b.OpenEventLog()
			write := l.writeEvents([]Event{e}, true)
			commit = func() error { defer l.Close(); return write() }
		}
		leave()
		if errors.Is(err, fs.ErrExist) {
			continue // a file someone placed by hand
		}
		if err != nil {
			return Session{}, fmt.Errorf("create session %s: %w", id, err)
		}
		b.MarkChanged(Todo) // the next next lists todo/ (see PeekFresh)
		if commit != nil {
			_ = commit() // the session stands: history is the caller's to check (doctor)
		} else if err := b.Record(e); err != nil {
			return Session{}, fmt.Errorf("create session %s: %w", id, err) // undone by the arbiter
		}
		return Session{ID: id, State: Todo, Meta: m, Path: path}, nil
	}
	return Session{}, fmt.Errorf("create session: more than %d sessions in second %s", maxSameSecond, now.Format(IDFormat))
}

// forgetOldReservations removes id reservations older than two hours: an id
// embeds its creation second, so only a clock set back that far could
// generate one of them again, and Locate still guards that case.
func (b *Board) forgetOldReservations(now time.Time) {
	dir := filepath.Join(b.RuntimeDir(), "ids")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	cutoff := now.Add(-2 * time.Hour).Format("2006-01-02_15")
	for _, e := range entries {
		if e.IsDir() && len(e.Name()) == len(cutoff) && strings.Compare(e.Name(), cutoff) < 0 {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// checkArbiter refuses to change a shared board (config.yaml says
// shared:) that has no arbiter attached: the change would be this clone's
// only, unknown to the git remote or the database that decides. claim.New
// attaches the arbiter; pickup's commands attach their own.
func (b *Board) checkArbiter() error {
	if b.arbiterOf() != nil {
		return nil
	}
	cfg, _ := b.Config()
	if cfg.Shared == "" {
		return nil
	}
	return fmt.Errorf("board %s is shared (shared: in %s) and no arbiter is attached to it, so the change would stay in this clone: "+
		"make a client with claim.New(board, owner) first, which attaches it, and keep it open while you change the board", b.Dir, filepath.Join(b.Dir, ConfigFile))
}
