package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoNet: pickup-board reads a PostgreSQL board through pickup's helper
// (internal/arbiter/postgres starts pickup-postgres), never by linking the
// database driver and package net itself: the board stays a program that
// needs no resolver, like pickup.
func TestNoNet(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "net" || strings.HasPrefix(pkg, "github.com/jackc/") || pkg == "github.com/pickup-dev/pickup/internal/arbiter/postgres/pgserver" {
			t.Errorf("pickup-board depends on %s; find the importer with: go list -f '{{.ImportPath}}: {{.Imports}}' -deps . | grep -w %s", pkg, pkg)
		}
	}
}
