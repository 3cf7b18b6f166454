package gitremote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
		seen := s.readRef(ctx, refBoard)
		refs, err := s.fetch(ctx)
		var tip, base string // the remote's tip; what to build on
		switch {
		case errors.Is(err, ErrNoBoardBranch):
			// Made here, or re-made (the branch was deleted: an explicit
			// act, this one) from the history this clone saw, so that
			// every clone that saw it moves forward from it.
			if base, err = s.lastKnown(ctx, seen); err != nil {
				return 0, false, err
			}
		case err != nil:
			return 0, false, err
		default:
			tip, base = refs[refFetched], refs[refFetched]
			if err := s.forward(ctx, seen, tip); err != nil {
				return 0, false, err
			}
			if err := s.forward(ctx, refs[refWitness+s.Branch], tip); err != nil {
				return 0, false, err
			}
			s.seePeers(refs)
		}
		// The commit to stand: the branch as it is (or was), plus the
		// sessions only this clone has, plus config.yaml saying this
		// shared board (put back if a person deleted or changed it).
		commit, n, err := s.importLocal(ctx, base)
		if err != nil {
			return 0, false, err
		}
		if commit != tip {
			err = s.pushBoard(ctx, tip, commit)
		}
		if err == nil {
			if err := s.apply(ctx, s.readRef(ctx, refBoard), commit); err != nil {
				return 0, false, err
			}
			_, _ = s.Repo.RunIn(ctx, []byte("update "+refBoard+" "+commit+"\nupdate "+refFetched+" "+commit+"\n"), nil, "update-ref", "--stdin")
			if err := s.restoreConfig(ctx, commit); err != nil {
				return 0, false, err
			}
			if err := s.Record(ctx); err != nil {
				return 0, false, err
			}
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
	var objs [][]byte
	for _, rel := range add {
		data, err := os.ReadFile(s.abs(rel))
		if err != nil {
			return "", 0, err
		}
		if rel == sessions.ConfigFile {
			data = nil // written below, as it must be
			continue
		}
		objs = append(objs, data)
	}
	add = slices.DeleteFunc(add, func(rel string) bool { return rel == sessions.ConfigFile })
	cfg, err := s.configFor(ctx, tip, t)
	if err != nil {
		return "", 0, err
	}
	if cfg != nil {
		add, objs = append(add, sessions.ConfigFile), append(objs, cfg)
	}
	if tip != "" && len(add) == 0 {
		return tip, len(ids), nil
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

// lastKnown is the most complete history of a board branch that the
// remote no longer has: the later of seen (the last tip this clone saw)
// and the tip pickup last pushed there (refs/pickup/tips/<branch>, which
// a deletion of the branch leaves behind).
func (s *Board) lastKnown(ctx context.Context, seen string) (string, error) {
	_, err := s.Repo.Run(ctx, "fetch", "--quiet", "--no-tags", "--no-auto-maintenance", "--no-write-fetch-head", "--no-recurse-submodules", "--refmap=", s.Remote,
		"+"+tipsRef+"*:"+refWitness+"*")
	if err != nil {
		return "", s.remoteErr("fetch", err)
	}
	witness := s.readRef(ctx, refWitness+s.Branch)
	switch {
	case witness == "" || witness == seen:
		return seen, nil
	case seen == "":
		return witness, nil
	}
	if ok, err := s.isAncestor(ctx, seen, witness); err != nil || ok {
		return witness, err
	}
	if ok, err := s.isAncestor(ctx, witness, seen); err != nil || ok {
		return seen, err
	}
	return "", &HistoryError{Remote: s.Remote, Branch: s.Branch, Seen: seen, Now: witness}
}

// configFor is the config.yaml that a commit on tip (whose files are t)
// needs so that it says this shared board: nil if the tip's says so
// already; else the tip's file (or this board's, if the tip has none)
// with its shared lines set.
func (s *Board) configFor(ctx context.Context, tip string, t tree) ([]byte, error) {
	var data []byte
	if e, ok := t[sessions.ConfigFile]; ok {
		blobs, err := s.Repo.CatBlobs(ctx, e.sha)
		if err != nil {
			return nil, err
		}
		data = blobs[e.sha]
		if s.checkFetchedConfig(data, true) == nil {
			return nil, nil
		}
	} else if local, err := os.ReadFile(s.abs(sessions.ConfigFile)); err == nil {
		data = local
	}
	return WithShared(data, s.Remote, s.Branch), nil
}

// WithShared is config.yaml's content with its shared: and shared_branch:
// lines saying remote and branch (other lines as they are).
func WithShared(data []byte, remote, branch string) []byte {
	var b strings.Builder
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if strings.HasPrefix(l, "shared:") || strings.HasPrefix(l, "shared_branch:") || l == "" {
			continue
		}
		b.WriteString(l)
		if !strings.HasSuffix(l, "\n") {
			b.WriteString("\n")
		}
	}
	b.WriteString("shared: " + remote + "\n")
	if branch != DefaultBranch {
		b.WriteString("shared_branch: " + branch + "\n")
	}
	return []byte(b.String())
}

// restoreConfig makes the board's config.yaml commit's (an agent may have
// deleted it here).
func (s *Board) restoreConfig(ctx context.Context, commit string) error {
	out, err := s.Repo.Run(ctx, "rev-parse", "-q", "--verify", commit+":"+sessions.ConfigFile)
	if err != nil {
		return nil
	}
	sha := strings.TrimSpace(out)
	blobs, err := s.Repo.CatBlobs(ctx, sha)
	if err != nil {
		return err
	}
	return s.place(sessions.ConfigFile, blobs[sha], true)
}

// Follow takes the board branch's config.yaml as it is, after a person
// confirmed it (pickup init --shared --follow): it returns what the
// file says. If it says the board is no longer shared, the board
// directory becomes the branch's content and the clone forgets the shared
// board; if it names another remote or branch, the caller joins that one.
func (s *Board) Follow(ctx context.Context) (sessions.Config, error) {
	unlock, err := s.lock()
	if err != nil {
		return sessions.Config{}, err
	}
	defer unlock()
	seen := s.readRef(ctx, refBoard)
	refs, err := s.fetch(ctx)
	if err != nil {
		return sessions.Config{}, s.gone(seen, err)
	}
	tip := refs[refFetched]
	if err := s.forward(ctx, seen, tip); err != nil {
		return sessions.Config{}, err
	}
	var cfg sessions.Config
	if out, err := s.Repo.Run(ctx, "rev-parse", "-q", "--verify", tip+":"+sessions.ConfigFile); err == nil {
		sha := strings.TrimSpace(out)
		blobs, err := s.Repo.CatBlobs(ctx, sha)
		if err != nil {
			return cfg, err
		}
		if cfg, err = sessions.ParseConfig(sessions.ConfigFile+" on "+s.Remote+"/"+s.Branch, blobs[sha]); err != nil {
			return cfg, err
		}
		if cfg.Shared != "" {
			if err := s.place(sessions.ConfigFile, blobs[sha], true); err != nil {
				return cfg, err
			}
			Forget(ctx, s.Repo)
			return cfg, nil
		}
	}
	s.acceptConfig = true
	defer func() { s.acceptConfig = false }()
	if err := s.apply(ctx, seen, tip); err != nil {
		return cfg, err
	}
	Forget(ctx, s.Repo)
	return cfg, nil
}
