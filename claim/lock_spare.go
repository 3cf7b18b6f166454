package claim

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/internal/proc"
)

// Private record files, and the fast release.
//
// A record is written to a private ".rec-<pid>-<n>" file, kept open, before
// it is published. Acquire keeps that descriptor while the lock is held,
// and its release takes the fast path: under the guard, if the key's name
// still refers to the very file it published (same device and inode
// number), it renames it back to a private name and keeps it, open, to
// rewrite for a later acquisition. That saves reading the record and
// creating and deleting a file, which together cost several times more.
//
// Why the identity check proves that the lock is still ours: the open
// descriptor pins the inode, so while we hold it no other file can have its
// number; and nobody but us ever writes or republishes that file. Others
// write only files of their own, and every other way a record leaves its
// name (a takeover, a release by owner, a forced release, a heartbeat's
// replacement, Cleanup) deletes it rather than reuse it. So if the name
// refers to our file, our record is published there; if not (a heartbeat
// replaced it, or we lost the lock), the slow path reads the record and
// checks its token.
//
// Reuse is safe for readers too: a file is written only while it is
// private, and a published record is read only under its guard, during
// which it stays published.

// fileID identifies a file on one machine.
type fileID struct{ dev, ino uint64 }

// spare is a private record file, open for reading and writing.
type spare struct {
	path string // its private name; "" once published
	fd   int
	id   fileID
	size int
}

func (s *spare) close() { closeFD(s.fd) }

// drop closes s and deletes it if it is still private.
func (s *spare) drop() {
	closeFD(s.fd)
	if s.path != "" {
		_ = os.Remove(s.path)
	}
}

// newPrivate returns a fresh private file name, .rec-PID.PIDNS-TOKEN: the
// pid and the pid namespace that numbered it let Cleanup delete the files
// of processes that provably exited (a pid alone proves nothing: a sandbox
// numbers its processes anew).
func (l *Locks) newPrivate() string {
	self := l.local()
	return l.path(privatePrefix + strconv.Itoa(self.PID) + "." + strconv.FormatUint(self.PidNS, 10) + "-" + newToken())
}

// writeRecord writes data to the private file *tmp, to a spare if *tmp is
// nil, or else to a new file; fsynced unless NoSync, so that once published
// the record's name never points at unwritten data. A reused file longer
// than data is padded with spaces, which JSON ignores: truncating it would
// cost more.
func (l *Locks) writeRecord(tmp **spare, data []byte) error {
	if *tmp == nil {
		*tmp = l.getSpare()
	}
	if s := *tmp; s != nil {
		buf := data
		if len(buf) < s.size {
			buf = append(append(make([]byte, 0, s.size), data...), bytes.Repeat([]byte{' '}, s.size-len(data))...)
		}
		if err := writeFD(s.fd, buf, !l.NoSync); err == nil {
			s.size = len(buf)
			return nil
		}
		s.drop()
		*tmp = nil
	}
	s := &spare{path: l.newPrivate(), size: len(data)}
	var err error
	s.fd, s.id, err = createPrivate(s.path, l.FilePerm())
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(l.Dir, 0o755); err != nil {
			return err
		}
		s.fd, s.id, err = createPrivate(s.path, l.FilePerm())
	}
	if err != nil {
		return err
	}
	if err := writeFD(s.fd, data, !l.NoSync); err != nil {
		s.drop()
		return err
	}
	*tmp = s
	return nil
}

func (l *Locks) getSpare() *spare {
	l.spareMu.Lock()
	defer l.spareMu.Unlock()
	if len(l.spares) == 0 {
		return nil
	}
	s := l.spares[len(l.spares)-1]
	l.spares = l.spares[:len(l.spares)-1]
	return s
}

func (l *Locks) putSpare(s *spare) {
	l.spareMu.Lock()
	if len(l.spares) < maxSpares {
		l.spares, s = append(l.spares, s), nil
	}
	l.spareMu.Unlock()
	if s != nil {
		s.drop()
	}
}

// unlockHeld releases the lock on key that this Locks published from held,
// under its guard: by the fast path if the name still refers to held's
// file, else by reading the record and checking its token.
func (l *Locks) unlockHeld(key, token string, held *spare) error {
	name := lockFileName(key)
	path := l.path(name)
	err := l.withGuard(name, func() error {
		if id, err := pathID(path); err == nil && id == held.id {
			p := l.newPrivate()
			if err := fsx.RenameNoReplace(path, p); err != nil {
				return err
			}
			held.path = p
			l.putSpare(held)
			held = nil
			return nil
		}
		return l.removeLocked("release", key, name, tokenHolder(token))
	})
	if held != nil {
		held.close()
	}
	return lockErr("release", key, err)
}

// Close deletes the spare record files this Locks keeps open for reuse.
// Call it when done; files left by a process that exited without it are
// deleted by Cleanup. The Locks stays usable.
func (l *Locks) Close() error {
	l.spareMu.Lock()
	spares := l.spares
	l.spares = nil
	l.spareMu.Unlock()
	for _, s := range spares {
		s.drop()
	}
	return nil
}

// privateLeftover reports whether the private file name is a leftover: its
// process is gone, or it is older than privateMaxAge (age).
func (l *Locks) privateLeftover(name string, age time.Duration) bool {
	if age > privateMaxAge {
		return true
	}
	id, _, ok := strings.Cut(strings.TrimPrefix(name, privatePrefix), "-")
	pid, ns, _ := strings.Cut(id, ".") // no namespace (an older file): only its age tells
	n, err := strconv.Atoi(pid)
	if !ok || err != nil {
		return false
	}
	inode, _ := strconv.ParseUint(ns, 10, 64)
	p := proc.Process{Host: l.local().Host, PidNS: inode, PID: n, BootID: l.local().BootID}
	return l.sys.Liveness(p, l.local()) == proc.Dead
}
