package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pickup-dev/pickup/internal/fsx"
)

// A board is committed with a repository, and a repository can hold a
// symbolic link in any place: events.log -> ../../../.bashrc, doing/ ->
// /somewhere/else. pickup never works through one. Every file of the board
// is opened with O_NOFOLLOW (and O_NONBLOCK: a named pipe must not hang the
// command), and the directories it works in are checked once per command,
// not once per session: Open reads the board's top directory and .pickup/
// (one getdents each) and refuses a link, pipe or device where the board
// keeps its own files; the few deeper directories (doing/<owner>/, those
// inside .pickup/) are checked with one lstat when a command first uses
// them (CheckDir).

// ErrUnsafePath matches every *UnsafePathError.
var ErrUnsafePath = fsx.ErrUnsafe

// UnsafePathError reports a link, named pipe, socket or device where the
// board keeps a file or directory of its own. Its Hint says what to do.
type UnsafePathError = fsx.UnsafePathError

// ConflictsDirName is where doctor --fix moves the copies it does not keep.
const ConflictsDirName = "conflicts"

// boardMarker starts a line of the .gitattributes that `pickup init`
// writes: with it, a directory is a board even when a clone dropped its
// empty state directories. A .gitattributes of anyone else's, or an
// events.log, does not make a directory a board.
const boardMarker = "# pickup:"

// topEntry is what the board keeps at its top under a name.
type topEntry int8

const (
	topNone    topEntry = iota // not the board's: left alone
	topState                   // todo, doing, done: the board's identity
	topDir                     // failed, conflicts
	topFile                    // events.log, config.yaml, .gitattributes, .gitignore
	topRuntime                 // .pickup, a topDir whose entries are checked too
)

func topKind(name []byte) topEntry {
	switch string(name) { // no allocation: the compiler compares in place
	case "todo", "doing", "done":
		return topState
	case "failed", ConflictsDirName:
		return topDir
	case RuntimeDirName:
		return topRuntime
	case EventLogFile, ConfigFile, GitattributesFile, GitignoreFile:
		return topFile
	}
	return topNone
}

// survey is what Inspect found at the top of a board.
type survey struct {
	states  int   // how many of todo/, doing/, done/ are there (links count)
	notDir  bool  // one of them is a regular file: not a board
	runtime bool  // .pickup/ is a real directory
	marker  bool  // a .gitattributes is there: read it if states < 3
	unsafe  error // the first link, pipe or device found
}

func (s *survey) refuse(err error) {
	if s.unsafe == nil {
		s.unsafe = err
	}
}

// surveyTop reads the entries of the board's top directory abs: one
// getdents, with an lstat only for an entry whose type the filesystem does
// not report, or one that is refused (to say what it is).
func surveyTop(abs string) (survey, error) {
	var s survey
	var unknown []string
	// abs+"/." so that a board reached through a link (--dir of the
	// user's choosing) is listed: the links refused are those inside it.
	err := fsx.ScanSmallDir(abs+string(filepath.Separator)+".", func(name []byte, _ uint64, typ fs.FileMode) {
		kind := topKind(name)
		if kind == topNone {
			return
		}
		if typ == fs.ModeIrregular { // type unknown: ask below
			unknown = append(unknown, string(name))
			return
		}
		s.note(abs, string(name), kind, typ, false)
	})
	if err != nil {
		return s, err
	}
	for _, name := range unknown {
		info, err := os.Lstat(filepath.Join(abs, name))
		if err != nil {
			continue // gone since
		}
		s.note(abs, name, topKind([]byte(name)), info.Mode().Type(), true)
	}
	if s.runtime {
		s.surveyRuntime(filepath.Join(abs, RuntimeDirName))
	}
	return s, nil
}

// note records one entry of the top directory; typ is a dirent type, or
// with exact an lstat's.
func (s *survey) note(abs, name string, kind topEntry, typ fs.FileMode, exact bool) {
	path := filepath.Join(abs, name)
	dir := kind != topFile
	ok := typ == 0
	if dir {
		ok = typ == fs.ModeDir
	}
	switch {
	case kind == topState && typ == 0:
		s.notDir = true
		return
	case kind == topState && typ == fs.ModeSymlink:
		s.states++ // a board, whose link doctor reports
	case kind == topState && ok:
		s.states++
	case kind == topRuntime && ok:
		s.runtime = true
	case name == GitattributesFile && ok:
		s.marker = true
	}
	if ok {
		return
	}
	if !exact {
		// A dirent type says link or "something else": lstat says what.
		info, err := os.Lstat(path)
		if err != nil {
			return
		}
		typ = info.Mode().Type()
	}
	if err := fsx.Unsafe(path, typ, dir); err != nil {
		s.refuse(err)
	}
}

// surveyRuntime refuses any link, pipe or device directly inside .pickup/:
// pickup keeps only its own directories and files there.
func (s *survey) surveyRuntime(dir string) {
	_ = fsx.ScanSmallDir(dir, func(name []byte, _ uint64, typ fs.FileMode) {
		if typ == 0 || typ == fs.ModeDir {
			return
		}
		path := filepath.Join(dir, string(name))
		info, err := os.Lstat(path)
		if err != nil {
			return
		}
		switch t := info.Mode().Type(); t {
		case 0, fs.ModeDir, fs.ModeIrregular:
		default:
			s.refuse(fsx.Unsafe(path, t, false))
		}
	})
}

// hasMarker reports whether abs's .gitattributes is the one init writes.
func hasMarker(abs string) bool {
	data, err := fsx.ReadRegular(filepath.Join(abs, GitattributesFile))
	if err != nil {
		return false
	}
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte("\n"))
		if bytes.HasPrefix(line, []byte(boardMarker)) {
			return true
		}
	}
	return false
}

// Inspect returns the board at dir, as Open does, but does not refuse it
// for a link, pipe or device inside it: Unsafe then returns the first, and
// Check reports them all. It is for `pickup doctor`; everything else uses
// Open. Like Open it creates nothing.
func Inspect(dir string) (*Board, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	s, err := surveyTop(abs)
	if err != nil || s.notDir {
		return nil, fmt.Errorf("%w at %s", ErrNoBoard, abs)
	}
	if s.states < boardStates && !(s.marker && hasMarker(abs)) {
		return nil, fmt.Errorf("%w at %s", ErrNoBoard, abs)
	}
	return &Board{Dir: abs, unsafe: s.unsafe, surveyed: true}, nil
}

// Unsafe returns the first link, pipe or device that Open refused or
// Inspect found where the board keeps its own files (an
// *UnsafePathError), or nil.
func (b *Board) Unsafe() error { return b.unsafe }

// CheckDir returns an *UnsafePathError if the directory rel (slash
// separated, relative to the board) or one of its parents below the board
// is a link, pipe, device or file; a missing one is fine (what pickup
// creates is real). Open has checked the top directories and the entries
// of .pickup/: this is for the directories below those, such as
// doing/<owner> and .pickup/reaped/<owner>. It costs one lstat for each of
// rel's directories below the first two levels, and one for the second if
// it is under doing/.
func (b *Board) CheckDir(rel string) error {
	parts := splitRel(rel)
	path := b.Dir
	for i, p := range parts {
		path = filepath.Join(path, p)
		checked := i == 0 || (i == 1 && parts[0] == RuntimeDirName)
		if checked && b.surveyed {
			continue
		}
		info, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fsx.Unsafe(path, info.Mode(), true); err != nil {
			return err
		}
	}
	return nil
}

func splitRel(rel string) []string {
	var parts []string
	for _, p := range strings.Split(rel, "/") {
		if p != "" && p != "." {
			parts = append(parts, p)
		}
	}
	return parts
}
