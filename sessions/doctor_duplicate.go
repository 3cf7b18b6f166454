package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/pickup-dev/pickup/internal/fsx"
	"golang.org/x/sys/unix"
)

// checkCopies confirms and, with repair, resolves what the scan found of
// session id: several places (cs), or one file with several links. It
// looks again at every place the session can be while it holds the
// board's move guard exclusive, so that no claim, release, done or reap is
// in flight: a session the scan saw twice because it moved between two
// directory reads is then in one place, and is neither reported nor
// touched. With repair, every decision is made on that second look and
// carried out before the guard is released.
//
// Without the guard (a board whose .pickup/ this account cannot write),
// doctor still looks again, which makes a false finding unlikely but not
// impossible, and repairs nothing.
func (b *Board) checkCopies(id string, cs []copyOf, history func() claimHistory, o CheckOptions, repair bool) []Finding {
	var leave func()
	var err error
	switch {
	case b.unsafe != nil:
		err = b.unsafe // a link where pickup keeps its files: never opened through
	case repair:
		leave, err = b.enterRepair()
	default:
		leave, err = b.enterGuard(unix.LOCK_EX, repairGuardWait, "")
	}
	if err != nil {
		leave, repair = func() {}, false
	}
	defer leave()
	now, lerr := b.copiesNow(id)
	if lerr != nil {
		now = cs // cannot look again: report what the scan saw
	}
	var out []Finding
	switch {
	case len(now) == 0:
		return nil // gone while unguarded: nothing to say about it
	case len(now) == 1 && now[0].nlink < 2:
		return nil // one file that moved while the scan read the board
	case len(now) == 1:
		out = []Finding{{Kind: "hardlink", ID: id, Path: now[0].place.Path, Message: fmt.Sprintf("file has %d links (another name outside the board's states?)", now[0].nlink)}}
	default:
		out = b.resolveDuplicate(id, now, history(), o, repair)
	}
	if err != nil && o.Repair {
		for i := range out {
			out[i].Message += fmt.Sprintf("; the repair moved nothing: %v", err)
		}
	}
	return out
}

// copiesNow is every place session id is in now, with inode and link
// count: todo/, each doing/<owner>/, done/, failed/.
func (b *Board) copiesNow(id string) ([]copyOf, error) {
	owners, err := b.Owners()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	places := []Place{{State: Todo}}
	for _, o := range owners {
		places = append(places, Place{State: Doing, Owner: o})
	}
	places = append(places, Place{State: Done}, Place{State: Failed})
	var out []copyOf
	for _, p := range places {
		p.Path = b.Path(p.State, p.Owner, id)
		info, err := os.Lstat(p.Path)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		c := copyOf{place: p, nlink: 1}
		if sys, ok := info.Sys().(*syscall.Stat_t); ok {
			c.ino, c.nlink = sys.Ino, uint64(sys.Nlink)
		}
		out = append(out, c)
	}
	return out, nil
}

// resolveDuplicate reports (and with repair, resolves) a session found in
// several places. One file under several names (a crash inside the
// link+unlink fallback) keeps the name of its most advanced state; copies
// that are files of their own keep the one decideKeep chooses by the
// history. Every discarded name or copy goes to conflicts/ (nothing is ever
// deleted), and the owner of a discarded claim is fenced first. With
// repair, the caller holds the move guard exclusive (see checkCopies).
func (b *Board) resolveDuplicate(id string, cs []copyOf, h claimHistory, o CheckOptions, repair bool) []Finding {
	// Board order, whatever order the directories were read in.
	sort.Slice(cs, func(i, j int) bool { return cs[i].place.Path < cs[j].place.Path })
	d := keepDecision{keep: 0}
	oneFile := true
	for _, c := range cs[1:] {
		oneFile = oneFile && c.ino == cs[0].ino
	}
	if oneFile {
		for i, c := range cs {
			if rank(c.place.State) > rank(cs[d.keep].place.State) {
				d.keep = i
			}
		}
	} else {
		d = decideKeep(cs, h)
	}
	if d.keep < 0 {
		return undecided(id, cs, d.why)
	}
	kept := cs[d.keep]
	var out []Finding
	for i, c := range cs {
		if i == d.keep {
			continue
		}
		f := Finding{Kind: "duplicate", ID: id, Path: c.place.Path}
		sameFile := c.ino == kept.ino
		if sameFile {
			f.Kind = "hardlink"
			f.Message = fmt.Sprintf("same file also at %s (a move was interrupted)", kept.place.Path)
		} else {
			f.Message = fmt.Sprintf("session also at %s; a repair keeps that one: %s", kept.place.Path, d.why)
			if c.place.State == Doing {
				f.Message += fmt.Sprintf("; the claim of %s here is fenced (finishing it fails: claim lost)", c.place.Owner)
			}
		}
		if repair {
			f.Fix = b.discardFenced(id, c, kept, sameFile, d.why, o.Fence)
		}
		out = append(out, f)
	}
	return out
}

// undecided reports a session claimed in several doing/ folders that the
// history cannot decide between: nothing moves; the owners decide.
func undecided(id string, cs []copyOf, why string) []Finding {
	var owners []string
	for _, c := range cs {
		if c.place.State == Doing {
			owners = append(owners, c.place.Owner)
		}
	}
	var out []Finding
	for _, c := range cs[1:] {
		out = append(out, Finding{Kind: "duplicate", ID: id, Path: c.place.Path,
			Message: fmt.Sprintf("session also at %s; claimed by %s, and %s: a repair moves nothing; the owner who gives it up releases it, then a repair keeps the other's claim",
				cs[0].place.Path, strings.Join(owners, " and "), why)})
	}
	return out
}

// discardFenced fences the owner of a discarded claim (fence), then
// discards the copy; it returns what it did ("" if nothing).
func (b *Board) discardFenced(id string, c, kept copyOf, sameFile bool, why string, fence func(owner, id, reason string) error) string {
	fenced := ""
	if c.place.State == Doing && !sameFile && fence != nil {
		reason := fmt.Sprintf("doctor kept %s's copy: %s", b.place(kept.place.Path, id), why)
		if err := fence(c.place.Owner, id, reason); err != nil {
			return "" // unfenced, the owner could finish work it lost: keep the copy
		}
		fenced = fmt.Sprintf("; fenced %s: finishing %s now fails (claim lost)", c.place.Owner, id)
	}
	fix := b.discard(id, c, kept, sameFile, why)
	if fix == "" {
		return ""
	}
	return fix + fenced
}

// discard moves copy c out of the way of kept, to conflicts/, and records
// it. It never deletes a session file: a copy identical to the one kept
// goes to conflicts/ too. With sameFile, c is not a copy but a second name
// of kept's very file (a crash inside the link+unlink fallback): that name
// is unlinked once both names are seen to be the one file, and the file
// stays at kept's name (a name moved to conflicts/ would leave the file
// with two links for ever, and doctor reporting it). The caller holds the
// move guard exclusive and has just seen both where they are (see
// checkCopies); the move is a no-replace rename.
func (b *Board) discard(id string, c, kept copyOf, sameFile bool, why string) string {
	what := "identical copy"
	switch {
	case sameFile:
		return b.unlinkSecondName(id, c, kept)
	default:
		a, err1 := fsx.ReadRegular(c.place.Path)
		k, err2 := fsx.ReadRegular(kept.place.Path)
		if err1 != nil || err2 != nil {
			return ""
		}
		if !bytes.Equal(a, k) {
			what = "copy (different content)"
		}
	}
	dir := filepath.Join(b.Dir, ConflictsDirName)
	if err := b.CheckDir(ConflictsDirName); err != nil {
		return ""
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ""
	}
	suffix := string(c.place.State)
	if c.place.Owner != "" {
		suffix += "." + c.place.Owner
	}
	for n := 1; n < 1000; n++ {
		name := fmt.Sprintf("%s.%s.md", id, suffix)
		if n > 1 {
			name = fmt.Sprintf("%s.%s.%d.md", id, suffix, n)
		}
		dst := filepath.Join(dir, name)
		err := fsx.RenameNoReplace(c.place.Path, dst)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return ""
		}
		_ = b.syncDirs(dir, filepath.Dir(c.place.Path))
		logWhat := what
		if what == "copy (different content)" {
			logWhat = "duplicate with different content"
		}
		reason := logWhat + "; kept " + b.place(kept.place.Path, id) + ": " + why
		_ = b.Record(Event{Op: "doctor", ID: id, Src: c.place.Path, Dst: dst, Reason: reason})
		return fmt.Sprintf("kept %s; moved this %s to %s", kept.place.Path, what, dst)
	}
	return ""
}

// unlinkSecondName removes c, a second name of kept's file, after checking
// (under the guard the caller holds) that both names still are that one
// file: the file itself stays, at kept's name.
func (b *Board) unlinkSecondName(id string, c, kept copyOf) string {
	a, err1 := os.Lstat(c.place.Path)
	k, err2 := os.Lstat(kept.place.Path)
	if err1 != nil || err2 != nil || !os.SameFile(a, k) {
		return "" // not one file any more: leave both
	}
	if err := os.Remove(c.place.Path); err != nil {
		return ""
	}
	_ = b.syncDirs(filepath.Dir(c.place.Path))
	_ = b.Record(Event{Op: "doctor", ID: id, Src: c.place.Path, To: "removed",
		Reason: "second name of the file at " + b.place(kept.place.Path, id) + " (an interrupted move); the file stays there"})
	return fmt.Sprintf("kept %s; removed this second name of the same file (the file stays at the name kept)", kept.place.Path)
}
