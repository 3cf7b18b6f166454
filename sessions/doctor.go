package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pickup-dev/pickup/internal/fsx"
)

// Finding is one problem Check found on a board.
type Finding struct {
	Kind    string `json:"kind"` // frontmatter, unreadable, duplicate, hardlink, tempfile, symlink, stray, lease, config, dependency, cycle, history, eventlog
	ID      string `json:"id,omitempty"`
	Path    string `json:"path"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
	// Fix says what Repair did about it; empty if nothing was done.
	Fix string `json:"fix,omitempty"`
}

// tempFileAge is how old a temporary file must be before Repair removes it:
// younger ones may belong to a write in progress.
const tempFileAge = time.Minute

// Compiled on first use, not at start-up: every pickup process would pay
// for them, and only doctor uses them.
var (
	tempName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\..+\.md[0-9]+$`) })
	lineRef  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+): `) })
)

type copyOf struct {
	place Place
	ino   uint64
	nlink uint64
}

// Check inspects the board and, if repair is true, mends what it safely can:
// a session with several names for one file (a crash inside the link+unlink
// fallback) keeps the name of its most advanced state; a session present in
// several states (a merge of two branches) keeps done over doing over todo,
// and every discarded copy whose content differs is moved to conflicts/
// rather than deleted; temporary files older than a minute are removed.
// It also compares the event log with the board (see checkHistory): with
// repair, a line torn part-way is blanked out and a move the history missed
// gets a doctor line, so that each session's history ends where it is.
//
// Every symbolic link in the board, and every named pipe or device where
// it keeps its own files, is reported (see linkFindings) and never
// followed. While the board holds one that Open refuses (b.Unsafe), Check
// repairs nothing.
func (b *Board) Check(repair bool) ([]Finding, error) {
	out := b.linkFindings()
	repair = repair && b.unsafe == nil
	copies := map[string][]copyOf{}
	scan := func(st State, owner string) error {
		dir := b.StateDir(st, owner)
		entries, err := fsx.ReadDirIno(dir)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrUnsafePath) {
			return nil // nothing there, or a link: reported above
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			path := filepath.Join(dir, e.Name)
			info, err := os.Lstat(path)
			if err != nil {
				continue
			}
			switch {
			case tempName().MatchString(e.Name):
				f := Finding{Kind: "tempfile", Path: path, Message: "temporary file left by an interrupted write (never listed)"}
				if repair && time.Since(info.ModTime()) > tempFileAge && os.Remove(path) == nil {
					f.Fix = "removed"
				}
				out = append(out, f)
				continue
			case strings.HasPrefix(e.Name, "."):
				continue
			case info.Mode()&fs.ModeSymlink != 0:
				continue // reported by linkFindings
			case info.IsDir():
				if st != Doing || owner != "" {
					out = append(out, Finding{Kind: "stray", Path: path, Message: "directory in a state directory: ignored"})
				}
				continue
			case !info.Mode().IsRegular():
				out = append(out, Finding{Kind: "stray", Path: path, Message: "not a regular file: ignored"})
				continue
			}
			id, ok := IsSessionName(e.Name)
			if !ok {
				if strings.HasSuffix(e.Name, ".md") {
					out = append(out, Finding{Kind: "stray", Path: path, Message: "file name is not a valid session id (1-128 of A-Z a-z 0-9 . _ -, starting with a letter or digit): never listed"})
				}
				continue
			}
			if st == Doing && owner == "" {
				out = append(out, Finding{Kind: "stray", ID: id, Path: path, Message: "session directly in doing/ instead of doing/<owner>/: never listed"})
				continue
			}
			var nlink uint64 = 1
			if sys, ok := info.Sys().(*syscall.Stat_t); ok {
				nlink = uint64(sys.Nlink)
			}
			copies[id] = append(copies[id], copyOf{place: Place{State: st, Owner: owner, Path: path}, ino: e.Ino, nlink: nlink})
			s, err := readSession(path)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				// Listing skips a file it cannot read: say so here, or the
				// session would be invisible.
				out = append(out, Finding{Kind: "unreadable", ID: id, Path: path,
					Message: fmt.Sprintf("cannot read the session, so it is never listed or taken: %v; give the board's user read access to it", underlyingErr(err))})
				continue
			}
			if err == nil && s.Problem != "" {
				// One finding per problem, each with its own line.
				for _, problem := range strings.Split(s.Problem, "\n") {
					f := Finding{Kind: "frontmatter", ID: id, Path: path, Message: problem}
					if m := lineRef().FindStringSubmatch(problem); m != nil {
						f.Line, _ = strconv.Atoi(m[1])
						f.Message = strings.TrimPrefix(problem, m[0])
					}
					out = append(out, f)
				}
			}
		}
		return nil
	}
	if err := scan(Todo, ""); err != nil {
		return nil, err
	}
	if err := scan(Doing, ""); err != nil {
		return nil, err
	}
	owners, err := b.Owners()
	if err != nil && !errors.Is(err, ErrUnsafePath) {
		return nil, err
	}
	for _, o := range owners {
		if err := scan(Doing, o); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	if err := scan(Done, ""); err != nil {
		return nil, err
	}
	if err := scan(Failed, ""); err != nil {
		return nil, err
	}
	for id, cs := range copies {
		if len(cs) == 1 && cs[0].nlink > 1 {
			out = append(out, Finding{Kind: "hardlink", ID: id, Path: cs[0].place.Path, Message: fmt.Sprintf("file has %d links (another name outside the board's states?)", cs[0].nlink)})
		}
		if len(cs) < 2 {
			continue
		}
		out = append(out, b.resolveDuplicate(id, cs, repair)...)
	}
	if b.unsafe != nil {
		// The dependency and history checks would read through the link
		// it reports; they run once it is gone.
		return out, nil
	}
	deps, err := b.checkDependencies()
	if err != nil {
		return nil, err
	}
	out = append(out, deps...)
	// Last, as the history must end where the repairs left each session.
	places, err := b.currentPlaces(copies, repair)
	if err != nil {
		return nil, err
	}
	hist, err := b.checkHistory(places, repair, historySettle)
	if err != nil {
		return nil, err
	}
	return append(out, hist...), nil
}

func rank(st State) int {
	switch st {
	case Done:
		return 3
	case Failed:
		return 2
	case Doing:
		return 1
	}
	return 0
}

// resolveDuplicate reports (and with repair, resolves) a session found in
// several places. The copy kept is the most advanced state: done, then
// doing, then todo.
func (b *Board) resolveDuplicate(id string, cs []copyOf, repair bool) []Finding {
	keep := 0
	for i, c := range cs {
		if rank(c.place.State) > rank(cs[keep].place.State) {
			keep = i
		}
	}
	kept := cs[keep]
	var out []Finding
	for i, c := range cs {
		if i == keep {
			continue
		}
		f := Finding{Kind: "duplicate", ID: id, Path: c.place.Path}
		sameFile := c.ino == kept.ino
		if sameFile {
			f.Kind = "hardlink"
			f.Message = fmt.Sprintf("same file also at %s (a move was interrupted)", kept.place.Path)
		} else {
			f.Message = fmt.Sprintf("session also at %s", kept.place.Path)
		}
		if repair {
			f.Fix = b.discard(id, c, kept, sameFile)
		}
		out = append(out, f)
	}
	return out
}

func (b *Board) discard(id string, c, kept copyOf, sameFile bool) string {
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
				_ = b.Record(Event{Op: "doctor", ID: id, Src: c.place.Path, Dst: dst, Reason: "duplicate with different content; kept " + b.place(kept.place.Path, id)})
				return fmt.Sprintf("kept %s; moved this copy (different content) to %s", kept.place.Path, dst)
			}
			return ""
		}
	}
	if err := os.Remove(c.place.Path); err != nil {
		return ""
	}
	_ = b.Sync(filepath.Dir(c.place.Path))
	_ = b.Record(Event{Op: "doctor", ID: id, Src: c.place.Path, To: "removed", Reason: "identical copy; kept " + b.place(kept.place.Path, id)})
	return fmt.Sprintf("kept %s; removed this identical copy", kept.place.Path)
}

func underlyingErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
