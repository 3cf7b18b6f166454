package sessions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pickup-dev/pickup/internal/boardhook"
	"github.com/pickup-dev/pickup/internal/fsx"
)

// State is where a session is: todo, doing or done.
type State string

// The states a session moves through.
const (
	Todo  State = "todo"
	Doing State = "doing"
	Done  State = "done"
	// Failed holds sessions set aside after too many failed attempts by
	// `pickup work`; next never takes them, `pickup requeue` returns them.
	// The directory is created when first needed.
	Failed State = "failed"
)

// States lists the states every board has, in board order: todo, doing,
// done. Each call returns a new slice, which the caller may change.
func States() []State { return []State{Todo, Doing, Done} }

// boardStates is how many states every board has (States).
const boardStates = 3

// ParseState parses "todo", "doing" or "done".
func ParseState(s string) (State, error) {
	switch State(s) {
	case Todo, Doing, Done, Failed:
		return State(s), nil
	}
	return "", fmt.Errorf("unknown state %q: use todo, doing, done or failed", s)
}

// RuntimeDirName is the board's directory for machine-local files that are
// never committed: caches, id reservations, leases and locks.
const RuntimeDirName = ".pickup"

// ErrNoBoard reports that a directory holds no board.
var ErrNoBoard = errors.New("no board")

// Board is a board directory.
type Board struct {
	// Dir is the board's root, holding todo/, doing/ and done/.
	Dir string
	// NoSync skips the fsyncs that make writes and transitions durable
	// across power loss. Atomicity does not depend on them.
	NoSync bool
	// LineupAge is how long a one-shot next trusts a full listing of todo/
	// that any process made, instead of reading todo/ again (see
	// PeekFresh): 0 means one second, a negative age never.
	LineupAge time.Duration
	// Now replaces time.Now in tests.
	Now func() time.Time
	// OnEvent, if set, is called by Record after each transition was
	// appended to the event log, with the event (its Src and Dst say which
	// files moved) and the error of the append. The transition has happened
	// whatever it does; commit mode commits it here. It may be called from
	// several goroutines at once.
	OnEvent func(e Event, logErr error)
	// hooksMu guards what pickup's own packages set on the board beyond
	// its public API (internal/boardhook; sessions/hooks.go):
	//
	// arbiter, if set, decides whether a transition that has just
	// happened here stands (a shared board pushes it to the git remote,
	// whose ref update is the compare-and-swap). It gets the event
	// completed by NewEvent. nil: the transition stands and is recorded.
	// An error: the arbiter has undone the local move, and nothing is
	// recorded here. When it is set, it keeps the event log itself (Record
	// and claim's clients append nothing).
	//
	// lastHeard, if set, says when owner was last heard from by other
	// means than this machine's processes (a PostgreSQL board), as a time
	// of this machine's clock, and whether it was (claim.Leases).
	//
	// idSuffix, if set, goes into every id Create makes (a shared board's
	// per-clone suffix, so that clones never make the same id).
	//
	// heard gives the processes of owners' leases that other boards of
	// this machine recorded with the arbiter (an arbiter sets it;
	// claim.Leases reads it), so that an owner working in another clone of
	// this machine is judged by its processes here too.
	hooksMu   sync.Mutex
	arbiter   func(e Event) error
	lastHeard boardhook.LastHeard
	idSuffix  string
	heard     boardhook.Heard

	// surveyed: Open or Init checked the top directories and .pickup/'s
	// entries (CheckDir need not again).
	surveyed bool
	unsafe   error         // what Inspect found unsafe (see Unsafe)
	perm     atomic.Uint32 // PrivatePerm, once known
	git      gitGate       // the git work tree's sync gate, once found (see EnterMove)
}

// Record appends e (a transition that has just happened) to the board's
// event log and passes it to OnEvent. It returns the append's error; the
// transition stands regardless.
func (b *Board) Record(e Event) error {
	e = b.NewEvent(e)
	if arbiter := b.arbiterOf(); arbiter != nil {
		return arbiter(e)
	}
	err := b.AppendEvent(e)
	if b.OnEvent != nil {
		b.OnEvent(e, err)
	}
	return err
}

// Open returns the board at dir, or an error wrapping ErrNoBoard if dir
// does not hold one. A board is a directory that `pickup init` made: one
// with todo/, doing/ and done/, or, since git tracks no empty directories
// and a clone may lack some, one with the .gitattributes that init writes.
// A directory that merely holds a .gitattributes or an events.log is not
// one. Open creates nothing: a missing state directory reads as empty and
// is made by the first transition into it.
//
// Open refuses, with an *UnsafePathError (ErrUnsafePath), a board that
// holds a symbolic link, named pipe or device where it keeps its own files
// and directories (todo/, doing/, done/, failed/, conflicts/, .pickup/ and
// what is directly in it, events.log, config.yaml): pickup never works
// through one. `pickup doctor` opens such a board with Inspect to report
// them.
func Open(dir string) (*Board, error) {
	b, err := Inspect(dir)
	if err != nil {
		return nil, err
	}
	if b.unsafe != nil {
		return nil, fmt.Errorf("open board %s: %w", b.Dir, b.unsafe)
	}
	return b, nil
}

// Init creates a board at dir (and its parents), or completes a partial one.
// It is safe to run on an existing board.
func Init(dir string) (*Board, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	// Refuse before creating anything: MkdirAll would follow a link.
	if s, err := surveyTop(abs); err == nil && s.unsafe != nil {
		return nil, fmt.Errorf("create board: %w", s.unsafe)
	}
	for _, sub := range []string{"todo", "doing", "done", "failed", RuntimeDirName} {
		if err := os.MkdirAll(filepath.Join(abs, sub), 0o755); err != nil {
			return nil, fmt.Errorf("create board: %w", err)
		}
	}
	// Runtime files are per machine: keep them out of git.
	ignore := filepath.Join(abs, RuntimeDirName, ".gitignore")
	if err := fsx.WriteNew(ignore, []byte("# pickup runtime files: caches, leases, locks. Never commit them.\n*\n"), 0o644, true); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create board: %w", err)
	}
	// The board's own .gitignore and .gitattributes: runtime and temporary
	// files stay out of git; merges of the event log never conflict.
	if err := writeGitFiles(abs, true); err != nil {
		return nil, fmt.Errorf("create board: %w", err)
	}
	return &Board{Dir: abs, surveyed: true}, nil
}

func (b *Board) now() time.Time {
	if b.Now != nil {
		return b.Now().UTC()
	}
	return time.Now().UTC()
}

// StateDir returns the directory of a state; for Doing with an owner, the
// owner's directory.
func (b *Board) StateDir(st State, owner string) string {
	if st == Doing && owner != "" {
		return filepath.Join(b.Dir, string(Doing), owner)
	}
	return filepath.Join(b.Dir, string(st))
}

// Path returns the path of session id in state st (and owner, for Doing).
func (b *Board) Path(st State, owner, id string) string {
	return filepath.Join(b.StateDir(st, owner), id+".md")
}

// RuntimeDir returns <board>/.pickup.
func (b *Board) RuntimeDir() string { return filepath.Join(b.Dir, RuntimeDirName) }

// Place is one place where a session file exists.
type Place struct {
	State State
	Owner string // for Doing
	Path  string
}

// Locate returns every place where session id exists: none if it does not
// exist, more than one if a merge or a crash of the link+unlink fallback
// left copies (which `pickup doctor` repairs). Symlinks are not sessions.
func (b *Board) Locate(id string) ([]Place, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	var places []Place
	try := func(st State, owner string) {
		p := b.Path(st, owner, id)
		if info, err := os.Lstat(p); err == nil && info.Mode().IsRegular() {
			places = append(places, Place{State: st, Owner: owner, Path: p})
		}
	}
	try(Todo, "")
	owners, err := b.Owners()
	if err != nil {
		return nil, err
	}
	for _, o := range owners {
		try(Doing, o)
	}
	try(Done, "")
	try(Failed, "")
	return places, nil
}

// Owners lists the owner directories under doing/.
func (b *Board) Owners() ([]string, error) {
	entries, err := fsx.ReadDirIno(filepath.Join(b.Dir, string(Doing)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // a clone without doing/: nobody holds anything
	}
	if err != nil {
		return nil, err
	}
	var owners []string
	for _, e := range entries {
		if ValidateOwner(e.Name) != nil {
			continue
		}
		if e.Type == fs.ModeIrregular { // unknown: ask
			info, err := os.Lstat(filepath.Join(b.Dir, string(Doing), e.Name))
			if err != nil || !info.IsDir() {
				continue
			}
		} else if e.Type != fs.ModeDir {
			continue
		}
		owners = append(owners, e.Name)
	}
	return owners, nil
}

// syncDirs fsyncs the given directories unless the board is in NoSync mode.
func (b *Board) syncDirs(dirs ...string) error {
	if b.NoSync {
		return nil
	}
	for _, d := range dirs {
		if err := fsx.SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}
