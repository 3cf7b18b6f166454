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

// TestTopLevel: the repository's top level holds what the design fixes
// (go.mod, go.sum, main.go, claim, sessions, internal, testdata, scripts,
// README.md) and the files every repository has, nothing else: a binary
// built at the top and committed by mistake (a 13 MB ./bench once was)
// fails here, and so does a package that belongs under internal/.
func TestTopLevel(t *testing.T) {
	out, err := exec.Command("git", "ls-files").Output()
	if err != nil {
		t.Fatalf("git ls-files (this test reads what the repository tracks): %v", err)
	}
	allowed := map[string]bool{
		"go.mod": true, "go.sum": true, "main.go": true, "claim": true, "sessions": true,
		"internal": true, "testdata": true, "scripts": true, "README.md": true,
		"LICENSE": true, ".gitignore": true, ".ci": true,
		".claude-plugin": true, // the marketplace Claude Code reads at a repository's top (pickup help claude)
		"main_test.go":   true, "static_test.go": true,
	}
	seen := map[string]bool{}
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		top, _, _ := strings.Cut(f, "/")
		if !allowed[top] && !seen[top] {
			seen[top] = true
			t.Errorf("the top level tracks %s: move it where it belongs (a binary to .gitignore, a package under internal/), or add it to the design card and this list", top)
		}
	}
}
