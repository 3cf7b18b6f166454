package shared

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/sessions"
)

// Join makes this clone's board directory the remote's board: if the
// remote has the board branch, the board directory becomes a checkout of
// it, and sessions that only this clone had are added to the branch
// (nothing is lost); if it has none, the branch is made from the board
// directory as it is. It returns how many sessions the branch holds and
// whether this call created it.
func (s *Board) Join(ctx context.Context) (n int, created bool, err error) {
	unlock, err := s.lock()
	if err != nil {
		return 0, false, err
	}
	defer unlock()
	// The first fetch may bring a whole board: it may take longer than one
	// network deadline while its bytes keep moving.
	ctx, cancel := context.WithTimeout(ctx, gitx.LongTransfers*s.Repo.NetTimeoutOf())
	defer cancel()
	for attempt := 1; attempt <= 10; attempt++ {
		refs, err := s.fetch(ctx)
		var tip string
		switch {
		case errors.Is(err, ErrNoBoardBranch):
		case err != nil:
			return 0, false, err
		default:
			tip = refs[refFetched]
			s.seePeers(refs)
			if err := s.apply(ctx, refs[refBoard], tip); err != nil {
				return 0, false, err
			}
		}
		commit, n, err := s.importLocal(ctx, tip)
		if err != nil {
			return 0, false, err
		}
		if commit == tip {
			return n, false, nil
		}
		_, err = s.Repo.Run(ctx, "push", "--quiet", "--no-verify", s.Remote, commit+":refs/heads/"+s.Branch)
		if err == nil {
			_, _ = s.Repo.Run(ctx, "update-ref", refBoard, commit)
			_, _ = s.Repo.Run(ctx, "update-ref", refFetched, commit)
			return n, tip == "", nil
		}
		if !pushRejected(err) {
			return 0, false, s.remoteErr("init --shared", err)
		}
		s.sleep(s.backoff(attempt))
	}
	return 0, false, s.remoteErr("init --shared", errors.New("the board branch kept changing while joining it"))
}

// importLocal returns a commit on tip ("" for none) that adds the board
// files of this clone that the tip lacks (sessions by id, config.yaml,
// .gitignore, .gitattributes), or tip itself when it lacks none, and the
// number of sessions in the result.
func (s *Board) importLocal(ctx context.Context, tip string) (string, int, error) {
	t, err := s.lsTree(ctx, tip)
	if err != nil {
		return "", 0, err
	}
	ids := map[string]bool{}
	for p := range t {
		if id, _, ok := sessionPath(p); ok {
			ids[id] = true
		}
	}
	var add []string
	err = filepath.WalkDir(s.B.Dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel := s.rel(path)
		if d.IsDir() {
			if rel == sessions.RuntimeDirName || strings.HasPrefix(d.Name(), ".") && rel != "" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !boardFile(rel) {
			return nil
		}
		if id, _, ok := sessionPath(rel); ok {
			if !ids[id] {
				ids[id] = true
				add = append(add, rel)
			}
			return nil
		}
		if _, ok := t[rel]; !ok && rel != sessions.EventLogFile {
			add = append(add, rel)
		}
		return nil
	})
	if err != nil {
		return "", 0, err
	}
	if tip != "" && len(add) == 0 {
		return tip, len(ids), nil
	}
	var objs [][]byte
	for _, rel := range add {
		data, err := os.ReadFile(s.abs(rel))
		if err != nil {
			return "", 0, err
		}
		objs = append(objs, data)
	}
	var info strings.Builder
	if len(objs) > 0 {
		shas, err := s.hashObjects(ctx, objs...)
		if err != nil {
			return "", 0, err
		}
		for i, rel := range add {
			fmt.Fprintf(&info, "100644 %s\t%s\n", shas[i], rel)
		}
	}
	index := []string{"GIT_INDEX_FILE=" + filepath.Join(s.dir, fmt.Sprintf("index.%d", os.Getpid()))}
	defer os.Remove(strings.TrimPrefix(index[0], "GIT_INDEX_FILE="))
	readTree := []string{"read-tree", "--empty"}
	if tip != "" {
		readTree = []string{"read-tree", tip}
	}
	if _, err := s.Repo.RunIn(ctx, nil, index, readTree...); err != nil {
		return "", 0, err
	}
	if _, err := s.Repo.RunIn(ctx, []byte(info.String()), index, "update-index", "--add", "--index-info"); err != nil {
		return "", 0, err
	}
	treeSha, err := s.Repo.RunIn(ctx, nil, index, "write-tree")
	if err != nil {
		return "", 0, err
	}
	msg := fmt.Sprintf("pickup: shared board: add %d file(s) from a clone\n", len(add))
	args := []string{"commit-tree", strings.TrimSpace(treeSha), "-m", msg}
	if tip != "" {
		args = append(args, "-p", tip)
	}
	commit, err := s.Repo.RunIn(ctx, nil, identity, args...)
	if err != nil {
		return "", 0, err
	}
	return strings.TrimSpace(commit), len(ids), nil
}
