package gitremote

// The commit of a batch of transitions. Where the repository allows it
// (SHA-1 objects, gitx.Repo.ObjectsInProcess), the objects are written in
// this process: a transition then runs no git process before its push.
// Otherwise git's plumbing builds it with a private index.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/internal/gitx"
	"github.com/pickup-dev/pickup/sessions"
)

// commitFor makes the commit of moves on tip, whose files are t (as the
// moves leave it: sources removed, destinations present), and returns it
// with the new event log.
func (s *Board) commitFor(ctx context.Context, tip string, t tree, moves []move) (string, []byte, error) {
	if !s.Repo.ObjectsInProcess() || (tip != "" && len(tip) != 40) {
		return s.build(ctx, tip, moves)
	}
	logContent, err := s.tipLog(ctx, t)
	if err != nil {
		return "", nil, err
	}
	var subjects []string
	files := map[string]gitx.TreeFile{}
	for p, e := range t {
		files[p] = gitx.TreeFile{Mode: e.mode, Sha: e.sha}
	}
	for _, m := range moves {
		line, err := json.Marshal(m.event)
		if err != nil {
			return "", nil, err
		}
		logContent = append(logContent, append(line, '\n')...)
		if m.src != "" && m.src != m.dst {
			delete(files, m.src)
		}
		if m.dst != "" {
			sha, err := s.Repo.WriteObject("blob", m.content)
			if err != nil {
				return "", nil, err
			}
			files[m.dst] = gitx.TreeFile{Mode: "100644", Sha: sha}
		}
		subj, _, _ := strings.Cut(commitMessage(m.event), "\n")
		subjects = append(subjects, subj)
	}
	logSha, err := s.Repo.WriteObject("blob", logContent)
	if err != nil {
		return "", nil, err
	}
	files[sessions.EventLogFile] = gitx.TreeFile{Mode: "100644", Sha: logSha}
	treeSha, err := s.Repo.WriteTree(files)
	if err != nil {
		return "", nil, err
	}
	msg := commitMessage(moves[0].event)
	if len(moves) > 1 {
		msg = fmt.Sprintf("pickup: %d transitions\n\n%s", len(moves), strings.Join(subjects, "\n"))
	}
	commit, err := s.Repo.WriteObject("commit", commitBody(treeSha, tip, msg, time.Now()))
	return commit, logContent, err
}

// commitBody is a commit object's body, signed as identity signs.
func commitBody(tree, parent, msg string, now time.Time) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", tree)
	if parent != "" {
		fmt.Fprintf(&b, "parent %s\n", parent)
	}
	who := fmt.Sprintf("pickup <pickup@localhost> %d +0000", now.Unix())
	fmt.Fprintf(&b, "author %s\ncommitter %s\n\n%s", who, who, msg)
	if !strings.HasSuffix(msg, "\n") {
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// tipLog is the event log of the tip whose files are t: the board's own
// copy when it is that blob (as it is after this clone's last push or
// fetch), else read from git.
func (s *Board) tipLog(ctx context.Context, t tree) ([]byte, error) {
	e, ok := t[sessions.EventLogFile]
	if !ok {
		return nil, nil
	}
	if data, err := fsx.ReadRegular(filepath.Join(s.B.Dir, sessions.EventLogFile)); err == nil && gitx.HashObject("blob", data) == e.sha {
		return data, nil
	}
	blobs, err := s.Repo.CatBlobs(ctx, e.sha)
	if err != nil {
		return nil, err
	}
	return blobs[e.sha], nil
}

// move is one transition of a batch.
type move struct {
	src, dst string
	content  []byte
	event    sessions.Event
}

// build makes the commit of moves on tip: each session's file leaves src
// and arrives at dst with its content, and each event's line is appended
// to the event log. It returns the commit and the new log.
func (s *Board) build(ctx context.Context, tip string, moves []move) (string, []byte, error) {
	var logContent []byte
	if tip != "" {
		if out, err := s.Repo.Run(ctx, "rev-parse", "-q", "--verify", tip+":"+sessions.EventLogFile); err == nil {
			sha := strings.TrimSpace(out)
			blobs, err := s.Repo.CatBlobs(ctx, sha)
			if err != nil {
				return "", nil, err
			}
			logContent = blobs[sha]
		}
	}
	var subjects []string
	objs := [][]byte{nil}
	for _, m := range moves {
		line, err := json.Marshal(m.event)
		if err != nil {
			return "", nil, err
		}
		logContent = append(logContent, append(line, '\n')...)
		if m.dst != "" {
			objs = append(objs, m.content)
		}
		subj, _, _ := strings.Cut(commitMessage(m.event), "\n")
		subjects = append(subjects, subj)
	}
	objs[0] = logContent
	shas, err := s.hashObjects(ctx, objs...)
	if err != nil {
		return "", nil, err
	}
	var info strings.Builder
	k := 1
	for _, m := range moves {
		if m.src != "" && m.src != m.dst {
			fmt.Fprintf(&info, "0 0000000000000000000000000000000000000000\t%s\n", m.src)
		}
		if m.dst != "" {
			fmt.Fprintf(&info, "100644 %s\t%s\n", shas[k], m.dst)
			k++
		}
	}
	fmt.Fprintf(&info, "100644 %s\t%s\n", shas[0], sessions.EventLogFile)
	index := []string{"GIT_INDEX_FILE=" + filepath.Join(s.dir, fmt.Sprintf("index.%d", os.Getpid()))}
	defer os.Remove(strings.TrimPrefix(index[0], "GIT_INDEX_FILE="))
	readTree := []string{"read-tree", "--empty"}
	if tip != "" {
		readTree = []string{"read-tree", tip}
	}
	if _, err := s.Repo.RunIn(ctx, nil, index, readTree...); err != nil {
		return "", nil, err
	}
	if _, err := s.Repo.RunIn(ctx, []byte(info.String()), index, "update-index", "--add", "--index-info"); err != nil {
		return "", nil, err
	}
	treeSha, err := s.Repo.RunIn(ctx, nil, index, "write-tree")
	if err != nil {
		return "", nil, err
	}
	msg := commitMessage(moves[0].event)
	if len(moves) > 1 {
		msg = fmt.Sprintf("pickup: %d transitions\n\n%s", len(moves), strings.Join(subjects, "\n"))
	}
	args := []string{"commit-tree", strings.TrimSpace(treeSha), "-m", msg}
	if tip != "" {
		args = append(args, "-p", tip)
	}
	commit, err := s.Repo.RunIn(ctx, nil, identity, args...)
	if err != nil {
		return "", nil, err
	}
	return strings.TrimSpace(commit), logContent, nil
}

// readAnywhere reads session id wherever it is on this board.
func (s *Board) readAnywhere(id string) ([]byte, error) {
	places, err := s.B.Locate(id)
	if err != nil {
		return nil, err
	}
	for _, p := range places {
		if data, err := fsx.ReadRegular(p.Path); err == nil {
			return data, nil
		}
	}
	return nil, fmt.Errorf("session %s: %w", id, os.ErrNotExist)
}
