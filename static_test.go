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

// TestBoardStaysOut: the live board's terminal UI libraries link into
// pickup-board only (internal/cmd/pickup-board), never into pickup, which
// Claude Code hooks start at every tool call: each library's init would
// cost every start.
func TestBoardStaysOut(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "charm.land/") || strings.HasPrefix(pkg, "github.com/charmbracelet/") ||
			pkg == "github.com/pickup-dev/pickup/internal/boardview" || pkg == "github.com/pickup-dev/pickup/internal/boardfeed" {
			t.Errorf("pickup depends on %s, which belongs to pickup-board only", pkg)
		}
	}
}

// TestMCPStaysOut: the MCP SDK (which links net/http, TLS and OAuth)
// links into pickup-mcp only (internal/cmd/pickup-mcp), never into
// pickup, which agents' hooks start at every tool call.
func TestMCPStaysOut(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/modelcontextprotocol/") || pkg == "github.com/pickup-dev/pickup/internal/mcpserver" {
			t.Errorf("pickup depends on %s, which belongs to pickup-mcp only", pkg)
		}
	}
}
