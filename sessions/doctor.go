package sessions

import (
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
	Kind    string `json:"kind"` // frontmatter, unreadable, duplicate, hardlink, tempfile, symlink, stray, lease, config, dependency, cycle, history, eventlog, git
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
// several states (a merge of two branches) keeps done over doing over todo.
// Every copy it does not keep is moved to conflicts/, never deleted (a
// second name of one file is unlinked once both names are seen to be that
// file, which stays). Each such finding is confirmed, and each move decided, by a
// second look at every place the session can be, made under the board's
// move guard held exclusive (see moveGuardFile): so a session that moved
// while Check read the directories is neither reported nor touched, beside
// any number of agents at work. Temporary files older than a minute are
// removed.
// It also compares the event log with the board (see checkHistory): with
// repair, a line torn part-way is blanked out and a move the history missed
// gets a doctor line, so that each session's history ends where it is.
//
// Every symbolic link in the board, and every named pipe or device where
// it keeps its own files, is reported (see linkFindings) and never
// followed. While the board holds one that Open refuses (b.Unsafe), Check
// repairs nothing.
func (b *Board) Check(repair bool) ([]Finding, error) {
	return b.CheckWith(CheckOptions{Repair: repair})
}

// CheckWith is Check with options. A session claimed in two doing/
// folders keeps the claim that came first by the event log, and the other
// owner is fenced through o.Fence before its copy goes (see decideKeep).
// On a board whose git work tree is in the middle of a stopped rebase,
// merge, cherry-pick or revert, it reports that (the board shows the
// operation's state, not the branch's) and repairs nothing: with Repair it
// fails with the *gitx.StoppedError.
func (b *Board) CheckWith(o CheckOptions) ([]Finding, error) {
	repair := o.Repair
	out := b.linkFindings()
	if stopped := b.gitStopped(); stopped != nil {
		if repair {
			return nil, fmt.Errorf("doctor --fix: %w", stopped)
		}
		out = append(out, Finding{Kind: "git", Path: b.Dir, Message: stopped.Error() + "; the findings below may be that operation's, not the branch's"})
	}
	repair = repair && b.unsafe == nil
	if repair {
		defer b.MarkChanged(Todo) // a repair may put sessions back in todo/
	}
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
	var histories map[string][]Event
	histRead := false
	for id, cs := range copies {
		if len(cs) < 2 && cs[0].nlink < 2 {
			continue
		}
		if len(cs) > 1 && !histRead {
			histories, histRead = b.sessionHistories(), true
		}
		// The scan read one directory after another: a session that moved
		// meanwhile shows twice (one file, one link), and a real duplicate
		// may have been resolved since. Look again, with no move in flight.
		out = append(out, b.checkCopies(id, cs, func() claimHistory { return replayHistory(histories[id]) }, o, repair)...)
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

func underlyingErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
