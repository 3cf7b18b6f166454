package agentse2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pickup-dev/pickup/internal/help"
	"github.com/pickup-dev/pickup/internal/testbound"
)

// The MCP setup lines of `pickup help mcp` for Codex CLI, Gemini CLI and
// Cursor, tested as users use them: each snippet is taken from the help
// text, written where its prose says that agent reads it (a home folder
// and a repository of the test's own), loaded by the agent's real CLI
// where there is one here (`codex mcp list --json` parses the TOML;
// `gemini mcp list` parses the JSON, starts the server and reports it
// connected) or parsed as that agent's format (Cursor's JSON, no CLI
// here), and the command it names, run as written with pickup on PATH,
// starts `pickup mcp` and answers initialize and tools/list with pickup's
// seven tools.

// snippet is one fenced block of a help topic and the prose line before it.
type snippet struct {
	prose, lang, text string
}

// snippets returns the fenced blocks of a topic, each with the last
// line of prose above it.
func snippets(t *testing.T, topic string) []snippet {
	t.Helper()
	text, ok := help.Text(topic)
	if !ok {
		t.Fatalf("no help topic %q", topic)
	}
	var out []snippet
	var prose string
	var cur *snippet
	for _, line := range strings.Split(text, "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &snippet{prose: prose, lang: strings.TrimPrefix(line, "```")}
		case cur != nil && strings.HasPrefix(line, "```"):
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		case strings.TrimSpace(line) != "":
			prose = line
		}
	}
	return out
}

// setupSnippet is the block of `pickup help mcp` whose prose names agent,
// in lang, and the file the prose says to put it in (its first
// backquoted path).
func setupSnippet(t *testing.T, agent, lang string) (text, file string) {
	t.Helper()
	for _, s := range snippets(t, "mcp") {
		if strings.HasPrefix(s.prose, agent) && s.lang == lang {
			m := regexp.MustCompile("`([^`]+)`").FindStringSubmatch(s.prose)
			if m == nil {
				t.Fatalf("pickup help mcp: the %s setup (%q) names no file", agent, s.prose)
			}
			return s.text, m[1]
		}
	}
	t.Fatalf("pickup help mcp has no %s block for %s", lang, agent)
	return "", ""
}

// mcpSetup is a repository with a board and one session, and a home
// folder of its own, for one agent's MCP setup.
type mcpSetup struct {
	t          *testing.T
	root, home string
	env        []string
}

var mcpBuild struct {
	once sync.Once
	err  error
}

func newMCPSetup(t *testing.T) *mcpSetup {
	t.Helper()
	pickup := pickupBinary(t)
	// pickup mcp hands over to pickup-mcp, found beside pickup.
	mcpBuild.once.Do(func() {
		out, err := exec.Command("go", "build", "-race=false", "-o", filepath.Join(filepath.Dir(pickup), "pickup-mcp"),
			"github.com/pickup-dev/pickup/internal/cmd/pickup-mcp").CombinedOutput()
		if err != nil {
			mcpBuild.err = fmt.Errorf("go build pickup-mcp: %v\n%s", err, out)
		}
	})
	if mcpBuild.err != nil {
		t.Fatal(mcpBuild.err)
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &mcpSetup{t: t, root: filepath.Join(dir, "repo"), home: filepath.Join(dir, "home")}
	for _, d := range []string{s.root, s.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "CLAUDE") || strings.HasPrefix(name, "CODEX") || strings.HasPrefix(name, "GEMINI") ||
			strings.HasPrefix(name, "GOOGLE") || strings.HasPrefix(name, "OPENAI") || strings.HasPrefix(name, "PICKUP_") ||
			name == "HOME" || name == "PATH" || name == "XDG_CONFIG_HOME" || name == "XDG_CACHE_HOME" {
			continue
		}
		s.env = append(s.env, kv)
	}
	s.env = append(s.env, "HOME="+s.home, "PATH="+filepath.Dir(pickup)+string(os.PathListSeparator)+os.Getenv("PATH"))
	s.run("git", "init", "-q")
	s.run(pickup, "init")
	s.run(pickup, "new", "--title", "Fix the parser")
	return s
}

func (s *mcpSetup) run(name string, args ...string) string {
	s.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = s.root, s.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// put writes data at file as the help names it: ~/… in the home folder,
// else in the repository.
func (s *mcpSetup) put(file, data string) string {
	s.t.Helper()
	path := filepath.Join(s.root, file)
	if rest, ok := strings.CutPrefix(file, "~/"); ok {
		path = filepath.Join(s.home, rest)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		s.t.Fatal(err)
	}
	return path
}

// serves runs command with args as an agent does (by name, on the
// agent's PATH, in the repository) and checks that it answers an MCP
// initialize and tools/list with pickup's tools, and a call of list that
// shows the board.
func (s *mcpSetup) serves(ctx context.Context, agent, command string, args []string) {
	s.t.Helper()
	// sh resolves the name on the agent's PATH, as the agents do.
	cmd := exec.Command("sh", append([]string{"-c", `exec "$0" "$@"`, command}, args...)...)
	cmd.Dir, cmd.Env, cmd.Stderr = s.root, s.env, os.Stderr
	cl := mcp.NewClient(&mcp.Implementation{Name: agent, Version: "1"}, nil)
	cs, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		s.t.Fatalf("%s: %s %v: initialize: %v", agent, command, args, err)
	}
	defer cs.Close()
	if got := cs.InitializeResult(); got == nil || got.ServerInfo == nil || got.ServerInfo.Name != "pickup" {
		s.t.Errorf("%s: initialize answered %+v, want the server pickup", agent, got)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		s.t.Fatalf("%s: tools/list: %v", agent, err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	sort.Strings(names)
	if got := strings.Join(names, " "); got != "claim done list new next release show" {
		s.t.Errorf("%s: tools/list: %s", agent, got)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list"})
	if err != nil || res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "Fix the parser") {
		s.t.Errorf("%s: list through the server: %v %+v, want the repository's session", agent, err, res)
	}
}

// TestMCPSetupCodex: the Codex CLI lines of pickup help mcp, in
// ~/.codex/config.toml, are read by the real codex (mcp list --json) as a
// stdio server pickup mcp, and that command serves the board.
func TestMCPSetupCodex(t *testing.T) {
	codex := agentBinary(t, "codex")
	watch := testbound.New(t, 0)
	s := newMCPSetup(t)
	text, file := setupSnippet(t, "Codex CLI", "toml")
	if file != "~/.codex/config.toml" {
		t.Errorf("the Codex setup goes in %s, want ~/.codex/config.toml (where codex reads it)", file)
	}
	s.put(file, text)
	cmd := exec.CommandContext(watch.Context(), codex, "mcp", "list", "--json")
	cmd.Dir, cmd.Env = s.root, s.env
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("codex mcp list --json did not load the setup: %v\n%s%s", err, out, stderr)
	}
	watch.Progress("codex listed its servers")
	var servers []struct {
		Name      string `json:"name"`
		Enabled   bool   `json:"enabled"`
		Transport struct {
			Type    string   `json:"type"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"transport"`
	}
	if err := json.Unmarshal(out, &servers); err != nil {
		t.Fatalf("codex mcp list --json: %v\n%s", err, out)
	}
	if len(servers) != 1 || servers[0].Name != "pickup" || !servers[0].Enabled || servers[0].Transport.Type != "stdio" {
		t.Fatalf("codex read the setup as %s, want one enabled stdio server pickup", out)
	}
	tr := servers[0].Transport
	if tr.Command != "pickup" || strings.Join(tr.Args, " ") != "mcp" {
		t.Errorf("codex runs %q %q, want pickup mcp", tr.Command, tr.Args)
	}
	s.serves(watch.Context(), "codex-mcp-client", tr.Command, tr.Args)
}

// TestMCPSetupGemini: the Gemini CLI lines, in the repository's
// .gemini/settings.json, are loaded by the real gemini (mcp list), which
// starts the server and reports it connected; and the command they name
// serves the board.
func TestMCPSetupGemini(t *testing.T) {
	gemini := agentBinary(t, "gemini")
	watch := testbound.New(t, 0)
	s := newMCPSetup(t)
	text, file := setupSnippet(t, "Gemini CLI", "json")
	if file != ".gemini/settings.json" {
		t.Errorf("the Gemini setup goes in %s, want .gemini/settings.json (where gemini reads it)", file)
	}
	s.put(file, text)
	// A folder the user trusts (else Gemini CLI disables the project's
	// servers), with no telemetry or update checks to wait out.
	s.put("~/.gemini/settings.json", `{"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},"general":{"disableAutoUpdate":true,"disableUpdateNag":true}}`)
	cmd := exec.CommandContext(watch.Context(), gemini, "mcp", "list")
	cmd.Dir, cmd.Env = s.root, append(s.env, "GEMINI_CLI_TRUST_WORKSPACE=true")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gemini mcp list: %v\n%s", err, out)
	}
	watch.Progress("gemini listed its servers")
	if !strings.Contains(string(out), "pickup: pickup mcp (stdio) - Connected") {
		t.Fatalf("gemini mcp list did not connect to pickup mcp:\n%s", out)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(text), &cfg); err != nil {
		t.Fatalf("the Gemini setup is not JSON: %v\n%s", err, text)
	}
	srv, ok := cfg.MCPServers["pickup"]
	if !ok || srv.Command != "pickup" || strings.Join(srv.Args, " ") != "mcp" {
		t.Fatalf("the Gemini setup names %+v, want mcpServers.pickup: pickup mcp", cfg)
	}
	s.serves(watch.Context(), "gemini-cli-mcp-client", srv.Command, srv.Args)
}

// TestMCPSetupCursor: the Cursor lines, in the repository's
// .cursor/mcp.json, are JSON of Cursor's mcpServers shape (no Cursor CLI
// runs here), and the command they name serves the board.
func TestMCPSetupCursor(t *testing.T) {
	watch := testbound.New(t, 0)
	s := newMCPSetup(t)
	text, file := setupSnippet(t, "Cursor", "json")
	if file != ".cursor/mcp.json" {
		t.Errorf("the Cursor setup goes in %s, want .cursor/mcp.json (where Cursor reads a project's servers)", file)
	}
	data, err := os.ReadFile(s.put(file, text))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		t.Fatalf("%s is not Cursor's mcpServers JSON: %v\n%s", file, err, data)
	}
	srv, ok := cfg.MCPServers["pickup"]
	if len(cfg.MCPServers) != 1 || !ok || srv.Command != "pickup" || strings.Join(srv.Args, " ") != "mcp" {
		t.Fatalf("%s names %+v, want mcpServers.pickup: pickup mcp", file, cfg)
	}
	s.serves(watch.Context(), "cursor-vscode", srv.Command, srv.Args)
}
