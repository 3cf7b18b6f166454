package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindBoardProgram(t *testing.T) {
	dir := t.TempDir()
	if _, err := findBoardProgram(dir); ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "pickup-board is not installed") {
		t.Fatalf("missing: %v (exit %d), want exit %d", err, ExitCode(err), ExitUsage)
	}
	var h interface{ Hint() string }
	_, err := findBoardProgram(dir)
	if !errors.As(err, &h) || !strings.Contains(h.Hint(), "go install github.com/pickup-dev/pickup/internal/cmd/pickup-board@latest") {
		t.Errorf("the hint does not say how to install it: %v", err)
	}
	// Not executable: not it.
	p := filepath.Join(dir, "pickup-board")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := findBoardProgram(dir); err == nil {
		t.Errorf("found a file that is not executable")
	}
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := findBoardProgram(t.TempDir() + string(filepath.ListSeparator) + dir)
	if err != nil || got != p {
		t.Errorf("on $PATH: %q, %v; want %s", got, err, p)
	}
}
