// Command linkfloor links every package pickup's command links and exits as
// soon as main starts: scripts/bench times it (built with pickup's tags) as
// the cost of starting pickup's executable before it does anything — the Go
// runtime, loading a binary of that size and the init of every package,
// urfave/cli, yaml and toml included. What a pickup process costs above it
// is pickup's own work.
//
// `linkfloor claim-fsyncs DIR` also does the least a durable claim must do
// on DIR (made by the caller with todo/ and doing/): one rename between
// todo/ and doing/ (back and forth on alternate runs), an fsync of both
// directories, and one line appended to events.log with an fsync — the
// floor under `pickup next` with fsync on.
package main

import (
	"os"
	"path/filepath"

	_ "github.com/pickup-dev/pickup/internal/cli"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "claim-fsyncs" {
		if err := claimFsyncs(os.Args[2]); err != nil {
			os.Stderr.WriteString("linkfloor: " + err.Error() + "\n")
			os.Exit(1)
		}
	}
}

func claimFsyncs(dir string) error {
	todo, doing := filepath.Join(dir, "todo"), filepath.Join(dir, "doing")
	src, dst := todo, doing
	if _, err := os.Stat(filepath.Join(todo, "s.md")); err != nil {
		src, dst = doing, todo
	}
	if err := os.Rename(filepath.Join(src, "s.md"), filepath.Join(dst, "s.md")); err != nil {
		return err
	}
	for _, d := range []string{dst, src} {
		if err := syncPath(d, os.O_RDONLY); err != nil {
			return err
		}
	}
	log, err := os.OpenFile(filepath.Join(dir, "events.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	if _, err := log.WriteString(`{"time":"2026-11-25T00:00:00Z","id":"s","op":"next","from":"todo","to":"doing/o"}` + "\n"); err != nil {
		return err
	}
	return log.Sync()
}

func syncPath(path string, flag int) error {
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
