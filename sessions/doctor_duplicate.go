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

	"github.com/pickup-dev/pickup/internal/fsx"
)

// resolveDuplicate reports (and with repair, resolves) a session found in
// several places. One file under several names (a crash inside the
// link+unlink fallback) keeps the name of its most advanced state; copies
// that are files of their own keep the one decideKeep chooses by the
// history. A discarded copy whose content differs goes to conflicts/, an
// identical one is removed (nothing is lost), and the owner of a discarded
// claim is fenced first.
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
			f.Message = fmt.Sprintf("session also at %s; --fix keeps that one: %s", kept.place.Path, d.why)
			if c.place.State == Doing {
				f.Message += fmt.Sprintf("; the claim of %s here is fenced (its done exits 6)", c.place.Owner)
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
			Message: fmt.Sprintf("session also at %s; claimed by %s, and %s: --fix moves nothing; the owner who gives it up runs `pickup --owner OWNER release %s`, then `pickup doctor --fix` keeps the other's claim",
				cs[0].place.Path, strings.Join(owners, " and "), why, id)})
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
		fenced = fmt.Sprintf("; fenced %s: its `pickup done %s` now exits 6 (claim lost)", c.place.Owner, id)
	}
	fix := b.discard(id, c, kept, sameFile, why)
	if fix == "" {
		return ""
	}
	return fix + fenced
}

// discard moves copy c out of the way of kept (to conflicts/ if its content
// differs, else removes it), holding the board's git gate (EnterMove), and
// records it.
func (b *Board) discard(id string, c, kept copyOf, sameFile bool, why string) string {
	leave, err := b.EnterMove()
	if err != nil {
		return ""
	}
	defer leave()
	if !sameFile {
		a, err1 := fsx.ReadRegular(c.place.Path)
		k, err2 := fsx.ReadRegular(kept.place.Path)
		if err1 != nil || err2 != nil {
			return ""
		}
		if !bytes.Equal(a, k) {
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
				_ = b.Sync(filepath.Dir(c.place.Path), dir)
				_ = b.Record(Event{Op: "doctor", ID: id, Src: c.place.Path, Dst: dst, Reason: "duplicate with different content; kept " + b.place(kept.place.Path, id) + ": " + why})
				return fmt.Sprintf("kept %s; moved this copy (different content) to %s", kept.place.Path, dst)
			}
			return ""
		}
	}
	if err := os.Remove(c.place.Path); err != nil {
		return ""
	}
	_ = b.Sync(filepath.Dir(c.place.Path))
	reason := "identical copy; kept " + b.place(kept.place.Path, id)
	if !sameFile {
		reason += ": " + why
	}
	_ = b.Record(Event{Op: "doctor", ID: id, Src: c.place.Path, To: "removed", Reason: reason})
	return fmt.Sprintf("kept %s; removed this identical copy", kept.place.Path)
}
