package gitremote

import (
	"context"
	"strings"

	"github.com/pickup-dev/pickup/sessions"
)

// entry is a file of the board branch's tree.
type entry struct{ mode, sha string }

// tree is the board branch's files by path (relative to the board).
type tree map[string]entry

// lsTree reads commit's tree ("" is the empty board).
func (s *Board) lsTree(ctx context.Context, commit string) (tree, error) {
	t := tree{}
	if commit == "" {
		return t, nil
	}
	out, err := s.Repo.Run(ctx, "ls-tree", "-r", "-z", "--full-tree", commit)
	if err != nil {
		return nil, err
	}
	for _, rec := range strings.Split(out, "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta)
		if len(f) != 3 || f[1] != "blob" {
			continue
		}
		t[path] = entry{mode: f[0], sha: f[2]}
	}
	return t, nil
}

// place is where a session is in a tree.
type place struct {
	path  string // relative to the board
	state sessions.State
	owner string
}

// sessionPath parses a board-relative path of a session file: todo/ID.md,
// doing/OWNER/ID.md, done/ID.md or failed/ID.md. Anything else (and any
// name that is not a valid id or owner: a remote's tree is not trusted) is
// not a session.
func sessionPath(path string) (id string, p place, ok bool) {
	parts := strings.Split(path, "/")
	var name string
	switch {
	case len(parts) == 2 && (parts[0] == "todo" || parts[0] == "done" || parts[0] == "failed"):
		p.state, name = sessions.State(parts[0]), parts[1]
	case len(parts) == 3 && parts[0] == "doing" && sessions.ValidateOwner(parts[1]) == nil:
		p.state, p.owner, name = sessions.Doing, parts[1], parts[2]
	default:
		return "", place{}, false
	}
	id, isMD := strings.CutSuffix(name, ".md")
	if !isMD || sessions.ValidateID(id) != nil {
		return "", place{}, false
	}
	p.path = path
	return id, p, true
}

// otherFiles are the board files besides sessions that the branch carries.
var otherFiles = map[string]bool{sessions.EventLogFile: true, sessions.ConfigFile: true, ".gitignore": true, ".gitattributes": true}

// boardFile reports whether path is a file the board branch may carry: a
// session, or one of otherFiles.
func boardFile(path string) bool {
	if otherFiles[path] {
		return true
	}
	_, _, ok := sessionPath(path)
	return ok
}

// find returns where t has session id (the first place found; a tree that
// pickup built has one).
func (t tree) find(id string) (place, bool) {
	for _, st := range []sessions.State{sessions.Todo, sessions.Done, sessions.Failed} {
		path := string(st) + "/" + id + ".md"
		if _, ok := t[path]; ok {
			return place{path: path, state: st}, true
		}
	}
	suffix := "/" + id + ".md"
	for path := range t {
		if strings.HasPrefix(path, "doing/") && strings.HasSuffix(path, suffix) {
			if gotID, p, ok := sessionPath(path); ok && gotID == id {
				return p, true
			}
		}
	}
	return place{}, false
}
