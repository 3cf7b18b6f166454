package gitx

// Writing objects without running git: a transition's commit on a shared
// board is a few small objects (the moved session's blob, the event log,
// the trees on the way, the commit), and running hash-object, read-tree,
// update-index, write-tree and commit-tree for them cost more than the
// push. Loose objects are zlib("<type> <size>\x00<body>") named by the
// SHA-1 of the uncompressed bytes, under objects/<2 hex>/<38 hex>. Only
// SHA-1 repositories are written this way (ObjectsInProcess).

import (
	"bytes"
	"compress/zlib"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ObjectsInProcess reports whether WriteObject can write r's objects: its
// object format is SHA-1 (git's default) and they are in its own
// objects directory.
func (r *Repo) ObjectsInProcess() bool {
	if os.Getenv("GIT_OBJECT_DIRECTORY") != "" {
		return false
	}
	data, err := os.ReadFile(filepath.Join(r.CommonDir, "config"))
	if err != nil {
		return false
	}
	return !strings.Contains(strings.ToLower(string(data)), "objectformat")
}

// HashObject is the name of an object of kind with body.
func HashObject(kind string, body []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", kind, len(body))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// WriteObject writes a loose object of kind ("blob", "tree", "commit")
// with body, unless the repository has it loose already, and returns its
// name.
func (r *Repo) WriteObject(kind string, body []byte) (string, error) {
	sha := HashObject(kind, body)
	dir := filepath.Join(r.CommonDir, "objects", sha[:2])
	path := filepath.Join(dir, sha[2:])
	if _, err := os.Lstat(path); err == nil {
		return sha, nil
	}
	var buf bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&buf, zlib.BestSpeed)
	fmt.Fprintf(zw, "%s %d\x00", kind, len(body))
	zw.Write(body)
	if err := zw.Close(); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("write object: %w", err)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, "tmp_obj_pickup_"+hex.EncodeToString(rnd[:]))
	if err := os.WriteFile(tmp, buf.Bytes(), 0o444); err != nil {
		return "", fmt.Errorf("write object: %w", err)
	}
	// A link never replaces: another writer's copy (the same bytes) stays.
	err := os.Link(tmp, path)
	_ = os.Remove(tmp)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("write object: %w", err)
	}
	return sha, nil
}

// TreeFile is a file of a tree to write: its mode ("100644") and blob.
type TreeFile struct{ Mode, Sha string }

// WriteTree writes the trees of files (by slash-separated path) and
// returns the root tree's name.
func (r *Repo) WriteTree(files map[string]TreeFile) (string, error) {
	type node struct {
		files map[string]TreeFile
		dirs  map[string]*node
	}
	newNode := func() *node { return &node{files: map[string]TreeFile{}, dirs: map[string]*node{}} }
	root := newNode()
	for path, f := range files {
		n := root
		parts := strings.Split(path, "/")
		for _, d := range parts[:len(parts)-1] {
			if n.dirs[d] == nil {
				n.dirs[d] = newNode()
			}
			n = n.dirs[d]
		}
		n.files[parts[len(parts)-1]] = f
	}
	var write func(n *node) (string, error)
	write = func(n *node) (string, error) {
		type ent struct{ name, key, mode, sha string }
		var ents []ent
		for name, f := range n.files {
			ents = append(ents, ent{name, name, f.Mode, f.Sha})
		}
		for name, d := range n.dirs {
			sha, err := write(d)
			if err != nil {
				return "", err
			}
			// git sorts a tree's entries as if directories' names ended in "/".
			ents = append(ents, ent{name, name + "/", "40000", sha})
		}
		sort.Slice(ents, func(i, j int) bool { return ents[i].key < ents[j].key })
		var body bytes.Buffer
		for _, e := range ents {
			raw, err := hex.DecodeString(e.sha)
			if err != nil || len(raw) != sha1.Size {
				return "", fmt.Errorf("write tree: bad object name %q for %s", e.sha, e.name)
			}
			body.WriteString(e.mode + " " + e.name + "\x00")
			body.Write(raw)
		}
		return r.WriteObject("tree", body.Bytes())
	}
	return write(root)
}
