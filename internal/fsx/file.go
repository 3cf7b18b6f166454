package fsx

import (
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"
)

// SyncDir fsyncs a directory so that the names created or removed in it
// survive a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteNew publishes data at path only if nothing is there yet (os.ErrExist
// otherwise). Readers never see a partial file: the data is written to a
// dot-named temporary file in the same directory, fsynced (when sync is true)
// so that the name never points at unwritten blocks, and then moved into
// place with RenameNoReplace; the directory is fsynced last so that the new
// name itself is durable.
func WriteNew(path string, data []byte, perm os.FileMode, sync bool) error {
	dir := filepath.Dir(path)
	pf, err := renameio.NewPendingFile(path, renameio.WithTempDir(dir), renameio.WithPermissions(perm))
	if err != nil {
		return err
	}
	defer pf.Cleanup()
	if _, err := pf.Write(data); err != nil {
		return err
	}
	if sync {
		if err := pf.Sync(); err != nil {
			return err
		}
	}
	if err := RenameNoReplace(pf.Name(), path); err != nil {
		return err
	}
	if sync {
		return SyncDir(dir)
	}
	return nil
}

// WriteReplace atomically replaces path with data (for caches and records
// that belong to one writer, never for session files). The temporary file
// lives in the same directory so the final rename stays on one filesystem.
func WriteReplace(path string, data []byte, perm os.FileMode, sync bool) error {
	opts := []renameio.Option{renameio.WithTempDir(filepath.Dir(path)), renameio.WithPermissions(perm)}
	if !sync {
		pf, err := renameio.NewPendingFile(path, opts...)
		if err != nil {
			return err
		}
		defer pf.Cleanup()
		if _, err := pf.Write(data); err != nil {
			return err
		}
		// Close and rename without fsync: the caller accepts losing the
		// newest version on power loss.
		if err := pf.File.Close(); err != nil {
			return err
		}
		return os.Rename(pf.Name(), path)
	}
	return renameio.WriteFile(path, data, perm, opts...)
}
