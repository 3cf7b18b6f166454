package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoCResolver: pickup must not link package net, whose resolver
// makes the executable dynamically linked (with cgo, the default where a
// C compiler is installed), and every pickup process would then start
// about a millisecond slower. The git proxy uses the socket system calls
// for that reason (internal/gitx/proxy.go).
func TestNoCResolver(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "net" || pkg == "runtime/cgo" || pkg == "os/user" {
			t.Errorf("pickup depends on %s; find the importer with: go list -f '{{.ImportPath}}: {{.Imports}}' -deps . | grep -w %s", pkg, pkg)
		}
	}
}
