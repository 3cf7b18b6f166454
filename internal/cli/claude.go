package cli

// The Claude Code integration: `pickup init --claude` installs the /pickup
// and /handoff skills and merges pickup's hooks into .claude/settings.json;
// the hidden `pickup hook EVENT` command is what those hooks run.
//
// Owners. A hook's owner is the session_id Claude Code sends on stdin. The
// skills name the same owner three ways, so that they agree with the hooks
// on every Claude Code version: they pass --owner ${CLAUDE_SESSION_ID},
// which Claude Code replaces with the session id when it loads a skill;
// the SessionStart hook also writes `export CLAUDE_SESSION_ID=<id>` to
// $CLAUDE_ENV_FILE, which Claude Code sources before every Bash command, so
// the variable is set even where the text is not replaced; and the hook
// records the id under <board>/.pickup/claude/pids/<pid>.json for the Claude
// process, where claudeOwner finds it for a pickup command run without any
// owner at all.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/internal/templates"
	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

// ---------------------------------------------------------------------------
// pickup init --claude | --claude --uninstall | --agents

// ClaudeSettingsFile is where pickup merges its hooks, relative to the
// repository's top directory.
const ClaudeSettingsFile = ".claude/settings.json"

// hookPrefix starts the command of every hook that pickup installs; the
// hooks that carry it are pickup's, whatever else is in settings.json.
const hookPrefix = "pickup hook "

// claudeHooks are the hooks pickup installs, one group per event.
var claudeHooks = []struct {
	event, matcher, command string
}{
	{"SessionStart", "", hookPrefix + "session-start"},
	{"PostToolUse", "*", hookPrefix + "post-tool-use"},
	{"SessionEnd", "", hookPrefix + "session-end"},
}

// initClaudeFlags are the flags of `pickup init` for the agent integrations.
func initClaudeFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.BoolFlag{Name: "claude", Usage: "also install the Claude Code integration in the repository's .claude/: the /pickup and /handoff skills, and hooks in settings.json"},
		&ucli.BoolFlag{Name: "uninstall", Usage: "with --claude: remove exactly what --claude added (the board stays)"},
		&ucli.BoolFlag{Name: "agents", Usage: "print a snippet for AGENTS.md that teaches other agents (Codex, ...) the protocol"},
	}
}

// wantsIntegration reports whether `pickup init` was asked for an agent
// integration, which initIntegration then handles instead of plain init.
func wantsIntegration(c *ucli.Context) bool {
	return c.Bool("claude") || c.Bool("uninstall") || c.Bool("agents")
}

// claudeChange is one thing installClaude did, or found already done.
type claudeChange struct {
	Path string `json:"path"`
	// Action is created, updated, removed, unchanged, or kept (a file
	// that differs from pickup's and was left alone).
	Action string `json:"action"`
	Detail string `json:"detail,omitempty"`
}

// initIntegration runs `pickup init --claude [--uninstall]` and
// `pickup init --agents`.
func (r *run) initIntegration(c *ucli.Context) error {
	agents, claude, uninstall := c.Bool("agents"), c.Bool("claude"), c.Bool("uninstall")
	if agents && (claude || uninstall) {
		return usageError("--agents only prints the AGENTS.md snippet; run `pickup init --claude` separately")
	}
	if agents {
		if r.json {
			return r.printJSON(map[string]string{"agents_md": agentsSnippet()})
		}
		r.printf("%s", agentsSnippet())
		return nil
	}
	if !claude {
		return usageError("--uninstall goes with --claude: pickup init --claude --uninstall")
	}
	top, err := r.claudeRepoTop()
	if err != nil {
		return err
	}
	out := map[string]any{"repo": top}
	if !uninstall {
		dir, err := r.boardDir()
		if err != nil {
			return err
		}
		b, err := sessions.Init(dir)
		if err != nil {
			return err
		}
		out["dir"] = b.Dir
		if !r.json {
			r.printf("board ready at %s\n", b.Dir)
		}
		if r.dir != "" {
			fmt.Fprintf(r.env.Stderr, "pickup: warning: the hooks and skills do not pass --dir: they use $PICKUP_DIR, else the repository's %s\n", DefaultBoardDir)
		}
	}
	changes, err := r.installClaude(top, uninstall)
	if changes == nil {
		changes = []claudeChange{}
	}
	if r.json {
		if err != nil {
			return err
		}
		out["changes"] = changes
		return r.printJSON(out)
	}
	for _, ch := range changes {
		line := fmt.Sprintf("%-9s %s", ch.Action, ch.Path)
		if ch.Detail != "" {
			line += ": " + ch.Detail
		}
		r.printf("%s\n", line)
	}
	if err != nil {
		return err
	}
	switch {
	case uninstall:
		r.printf("Claude Code integration removed from %s\n", top)
	case claudeAnyChanged(changes):
		r.printf("Claude Code integration installed in %s: /pickup, /handoff and pickup's hooks; start a new Claude Code session to load them\n", top)
	default:
		r.printf("Claude Code integration is up to date in %s\n", top)
	}
	return nil
}

func claudeAnyChanged(changes []claudeChange) bool {
	for _, ch := range changes {
		if ch.Action == "created" || ch.Action == "updated" || ch.Action == "removed" {
			return true
		}
	}
	return false
}

// agentsSnippet is the AGENTS.md section that `pickup init --agents` prints.
func agentsSnippet() string { return templates.Agents() }

// claudeRepoTop is the directory whose .claude/ the integration goes into:
// the top of the main work tree of the enclosing git repository (the one the board
// belongs to), else the current directory.
func (r *run) claudeRepoTop() (string, error) {
	wd, err := r.env.Getwd()
	if err != nil {
		return "", err
	}
	if top, ok := mainWorktree(wd); ok {
		return top, nil
	}
	return filepath.Abs(wd)
}

// installClaude installs the skills and merges the hooks into
// <top>/.claude/settings.json, or with uninstall removes exactly those.
// Everything is checked before anything is written: an unreadable or
// invalid settings.json changes nothing. A second install changes nothing.
func (r *run) installClaude(top string, uninstall bool) ([]claudeChange, error) {
	settings := filepath.Join(top, filepath.FromSlash(ClaudeSettingsFile))
	plan, err := planSettings(settings, uninstall)
	if err != nil {
		return nil, err
	}
	type fileStep struct {
		path string
		data []byte
		act  string
	}
	var steps []fileStep
	var changes []claudeChange
	for _, f := range templates.Claude() {
		path := filepath.Join(top, filepath.FromSlash(f.Path))
		old, err := os.ReadFile(path)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		same := exists && bytes.Equal(old, f.Data)
		switch {
		case !exists && !uninstall:
			steps = append(steps, fileStep{path, f.Data, "created"})
		case !exists:
			// Nothing to remove.
		case same && !uninstall:
			changes = append(changes, claudeChange{Path: path, Action: "unchanged"})
		case same:
			steps = append(steps, fileStep{path, nil, "removed"})
		case !uninstall:
			changes = append(changes, claudeChange{Path: path, Action: "kept",
				Detail: "differs from pickup's; left as it is (delete it and run `pickup init --claude` again for pickup's)"})
		default:
			changes = append(changes, claudeChange{Path: path, Action: "kept", Detail: "differs from what pickup installs; left as it is"})
		}
	}
	for _, s := range steps {
		if s.act == "removed" {
			if err := os.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return changes, err
			}
			_ = os.Remove(filepath.Dir(s.path)) // .claude/skills/<name>/, only if empty
		} else {
			if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
				return changes, err
			}
			if err := fsx.WriteNew(s.path, s.data, 0o644, !r.noSync); err != nil {
				return changes, fmt.Errorf("write %s: %w", s.path, err)
			}
		}
		changes = append(changes, claudeChange{Path: s.path, Action: s.act})
	}
	if err := plan.apply(!r.noSync); err != nil {
		return changes, err
	}
	if plan.change.Path != "" {
		changes = append(changes, plan.change)
	}
	if uninstall {
		// Empty directories hold nothing of anyone's.
		_ = os.Remove(filepath.Join(top, ".claude", "skills"))
		_ = os.Remove(filepath.Join(top, ".claude"))
	}
	return changes, nil
}

// settingsPlan is the change to settings.json, computed before anything
// is written.
type settingsPlan struct {
	path    string // the file to write (a symlink's target)
	old     []byte // its content when planned
	existed bool   // whether it existed then
	data    []byte // new content; nil with remove
	remove  bool
	write   bool
	perm    fs.FileMode
	change  claudeChange
}

func (p settingsPlan) apply(sync bool) error {
	if p.remove || p.write {
		// Someone (Claude Code itself, /config) may have saved the file
		// since it was read: never overwrite that.
		now, err := os.ReadFile(p.path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if (err == nil) != p.existed || !bytes.Equal(now, p.old) {
			return fmt.Errorf("%s changed while pickup was merging it; run again (it was left as it is)", p.path)
		}
	}
	switch {
	case p.remove:
		if err := os.Remove(p.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	case p.write:
		if err := os.MkdirAll(filepath.Dir(p.path), 0o755); err != nil {
			return err
		}
		if err := fsx.WriteReplace(p.path, p.data, p.perm, sync); err != nil {
			return fmt.Errorf("write %s: %w", p.path, err)
		}
	}
	return nil
}

// planSettings reads settings.json and computes its new content.
func planSettings(settings string, uninstall bool) (settingsPlan, error) {
	plan := settingsPlan{path: settings, perm: 0o644, change: claudeChange{Path: settings, Action: "unchanged"}}
	if target, err := filepath.EvalSymlinks(settings); err == nil {
		plan.path = target // keep a symlinked settings.json a symlink
	}
	data, err := os.ReadFile(plan.path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return plan, err
	}
	if !exists && uninstall {
		plan.change = claudeChange{}
		return plan, nil
	}
	plan.old, plan.existed = data, exists
	if info, err := os.Stat(plan.path); err == nil {
		plan.perm = info.Mode().Perm()
	}
	root := &ojValue{kind: '{'}
	if exists && len(bytes.TrimSpace(data)) > 0 {
		root, err = parseOJ(data)
		if err != nil {
			return plan, fmt.Errorf("%s: %w; fix or remove it and run again (nothing was changed)", settings, err)
		}
		if root.kind != '{' {
			return plan, fmt.Errorf("%s: the settings must be a JSON object; fix it and run again (nothing was changed)", settings)
		}
	}
	var changed bool
	if uninstall {
		changed = removeClaudeHooks(root)
	} else {
		changed, err = addClaudeHooks(root)
		if err != nil {
			return plan, fmt.Errorf("%s: %w; fix it and run again (nothing was changed)", settings, err)
		}
	}
	if !changed {
		return plan, nil
	}
	var events []string
	for _, h := range claudeHooks {
		events = append(events, h.event)
	}
	switch {
	case uninstall && len(root.members) == 0:
		plan.remove = true
		plan.change = claudeChange{Path: settings, Action: "removed", Detail: "it held only pickup's hooks"}
	case uninstall:
		plan.write = true
		plan.change = claudeChange{Path: settings, Action: "updated", Detail: "removed pickup's hooks, kept everything else"}
	case !exists:
		plan.write = true
		plan.change = claudeChange{Path: settings, Action: "created", Detail: "hooks " + strings.Join(events, ", ") + " run `pickup hook ...`"}
	default:
		plan.write = true
		plan.change = claudeChange{Path: settings, Action: "updated", Detail: "added pickup's hooks (" + strings.Join(events, ", ") + "), kept everything else"}
	}
	if plan.write {
		plan.data = root.encode()
	}
	return plan, nil
}

// addClaudeHooks adds pickup's hook groups that root lacks. A hook whose
// command is exactly pickup's counts as installed wherever it is (the user
// may have moved it or changed its matcher); other commands starting with
// "pickup hook " under the same event, from another pickup version, are
// replaced.
func addClaudeHooks(root *ojValue) (changed bool, err error) {
	hooks := root.get("hooks")
	if hooks == nil {
		hooks = &ojValue{kind: '{'}
		root.add("hooks", hooks)
		changed = true
	} else if hooks.kind != '{' {
		return false, errors.New(`"hooks" is not an object`)
	}
	for _, h := range claudeHooks {
		groups := hooks.get(h.event)
		if groups == nil {
			groups = &ojValue{kind: '['}
			hooks.add(h.event, groups)
			changed = true
		} else if groups.kind != '[' {
			return false, fmt.Errorf(`"hooks.%s" is not an array`, h.event)
		}
		if hasHookCommand(groups, h.command) {
			continue
		}
		removePickupHooks(groups)
		group := &ojValue{kind: '{'}
		if h.matcher != "" {
			group.add("matcher", ojString(h.matcher))
		}
		hook := &ojValue{kind: '{'}
		hook.add("type", ojString("command"))
		hook.add("command", ojString(h.command))
		group.add("hooks", &ojValue{kind: '[', elems: []*ojValue{hook}})
		groups.elems = append(groups.elems, group)
		changed = true
	}
	return changed, nil
}

// removeClaudeHooks removes every hook whose command starts with "pickup
// hook ", then the groups, event arrays, "hooks" object that this emptied.
// Anything that was empty before stays.
func removeClaudeHooks(root *ojValue) bool {
	hooks := root.get("hooks")
	if hooks == nil || hooks.kind != '{' {
		return false
	}
	changed := false
	kept := hooks.members[:0:0]
	for _, m := range hooks.members {
		if m.val.kind == '[' && removePickupHooks(m.val) > 0 {
			changed = true
			if len(m.val.elems) == 0 {
				continue
			}
		}
		kept = append(kept, m)
	}
	hooks.members = kept
	if changed && len(hooks.members) == 0 {
		root.remove(hooks)
	}
	return changed
}

// removePickupHooks removes pickup's hooks from an event's array of groups,
// and the groups that this left without hooks. It returns how many hooks it
// removed.
func removePickupHooks(groups *ojValue) int {
	n := 0
	kept := groups.elems[:0:0]
	for _, g := range groups.elems {
		list := g.get("hooks")
		if g.kind == '{' && list != nil && list.kind == '[' {
			before := len(list.elems)
			rest := list.elems[:0:0]
			for _, h := range list.elems {
				if cmd, ok := h.getString("command"); ok && strings.HasPrefix(strings.TrimSpace(cmd), hookPrefix) {
					continue
				}
				rest = append(rest, h)
			}
			list.elems = rest
			if removed := before - len(rest); removed > 0 {
				n += removed
				if len(rest) == 0 {
					continue
				}
			}
		}
		kept = append(kept, g)
	}
	groups.elems = kept
	return n
}

func hasHookCommand(groups *ojValue, command string) bool {
	for _, g := range groups.elems {
		if list := g.get("hooks"); list != nil && list.kind == '[' {
			for _, h := range list.elems {
				if cmd, ok := h.getString("command"); ok && strings.TrimSpace(cmd) == command {
					return true
				}
			}
		}
	}
	return false
}

// ---------------------------------------------------------------------------
// JSON that keeps what it does not change: members in their order, and
// every string, number and literal exactly as written. It is written back
// the way Claude Code writes its settings (JSON.stringify with two spaces).

type ojValue struct {
	kind    byte // '{' object, '[' array, 0 a string, number, true, false or null
	raw     []byte
	members []ojMember
	elems   []*ojValue
}

type ojMember struct {
	rawKey []byte // with its quotes, as written
	key    string
	val    *ojValue
}

func ojString(s string) *ojValue {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return &ojValue{raw: bytes.TrimSuffix(b.Bytes(), []byte("\n"))}
}

// get returns the value of key in an object (the last one, as JSON.parse
// does when a key repeats), or nil.
func (v *ojValue) get(key string) *ojValue {
	if v == nil || v.kind != '{' {
		return nil
	}
	for i := len(v.members) - 1; i >= 0; i-- {
		if v.members[i].key == key {
			return v.members[i].val
		}
	}
	return nil
}

func (v *ojValue) getString(key string) (string, bool) {
	x := v.get(key)
	if x == nil || x.kind != 0 || len(x.raw) == 0 || x.raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(x.raw, &s) != nil {
		return "", false
	}
	return s, true
}

func (v *ojValue) add(key string, val *ojValue) {
	v.members = append(v.members, ojMember{rawKey: ojString(key).raw, key: key, val: val})
}

// remove drops the member whose value is val.
func (v *ojValue) remove(val *ojValue) {
	for i, m := range v.members {
		if m.val == val {
			v.members = append(v.members[:i:i], v.members[i+1:]...)
			return
		}
	}
}

// encode writes v with two-space indentation and a final newline.
func (v *ojValue) encode() []byte {
	var b bytes.Buffer
	v.write(&b, 0)
	b.WriteByte('\n')
	return b.Bytes()
}

func (v *ojValue) write(b *bytes.Buffer, depth int) {
	indent := func(d int) {
		b.WriteByte('\n')
		for i := 0; i < d; i++ {
			b.WriteString("  ")
		}
	}
	switch v.kind {
	case '{':
		if len(v.members) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, m := range v.members {
			if i > 0 {
				b.WriteByte(',')
			}
			indent(depth + 1)
			b.Write(m.rawKey)
			b.WriteString(": ")
			m.val.write(b, depth+1)
		}
		indent(depth)
		b.WriteByte('}')
	case '[':
		if len(v.elems) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range v.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			indent(depth + 1)
			e.write(b, depth+1)
		}
		indent(depth)
		b.WriteByte(']')
	default:
		b.Write(v.raw)
	}
}

// parseOJ parses one JSON value. encoding/json checks the syntax first,
// so that an error names the line and column; the tree is then read from
// input known to be valid.
func parseOJ(data []byte) (*ojValue, error) {
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			at := se.Offset - 1 // the offending byte
			if strings.Contains(se.Error(), "unexpected end") {
				at = int64(len(data)) // the end of the file
			}
			line, col := ojLineCol(data, at)
			return nil, fmt.Errorf("line %d, column %d: invalid JSON: %s", line, col, se.Error())
		}
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	p := &ojParser{data: data}
	return p.value(), nil
}

// ojLineCol turns a byte offset into a 1-based line and column.
func ojLineCol(data []byte, offset int64) (int, int) {
	at := int(offset)
	if at < 0 {
		at = 0
	}
	if at > len(data) {
		at = len(data)
	}
	before := data[:at]
	line := bytes.Count(before, []byte("\n")) + 1
	col := at - bytes.LastIndexByte(before, '\n')
	return line, col
}

type ojParser struct {
	data []byte
	i    int
}

func (p *ojParser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *ojParser) value() *ojValue {
	p.space()
	switch p.data[p.i] {
	case '{':
		v := &ojValue{kind: '{'}
		p.i++
		p.space()
		if p.data[p.i] == '}' {
			p.i++
			return v
		}
		for {
			p.space()
			rawKey := p.str()
			var key string
			_ = json.Unmarshal(rawKey, &key)
			p.space()
			p.i++ // ':'
			v.members = append(v.members, ojMember{rawKey: rawKey, key: key, val: p.value()})
			p.space()
			c := p.data[p.i]
			p.i++ // ',' or '}'
			if c == '}' {
				return v
			}
		}
	case '[':
		v := &ojValue{kind: '['}
		p.i++
		p.space()
		if p.data[p.i] == ']' {
			p.i++
			return v
		}
		for {
			v.elems = append(v.elems, p.value())
			p.space()
			c := p.data[p.i]
			p.i++ // ',' or ']'
			if c == ']' {
				return v
			}
		}
	case '"':
		return &ojValue{raw: p.str()}
	default:
		start := p.i
		for p.i < len(p.data) && !bytes.ContainsRune([]byte(" \t\r\n,]}"), rune(p.data[p.i])) {
			p.i++
		}
		return &ojValue{raw: p.data[start:p.i]}
	}
}

// str reads a string token, quotes included.
func (p *ojParser) str() []byte {
	start := p.i
	p.i++
	for {
		switch p.data[p.i] {
		case '\\':
			p.i += 2
		case '"':
			p.i++
			return p.data[start:p.i]
		default:
			p.i++
		}
	}
}

// ---------------------------------------------------------------------------
// pickup hook session-start | post-tool-use | session-end

// claudeBeatEvery is how often the PostToolUse hook renews the lease; in
// between it returns after one stat.
const claudeBeatEvery = time.Minute

// maxHookInput bounds what a hook reads of its input into memory; the rest
// (a large tool response) is drained unread.
const maxHookInput = 1 << 20

func (r *run) hookCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "hook",
		Hidden:    true,
		Usage:     "run one of pickup's Claude Code hooks (installed by pickup init --claude)",
		UsageText: "pickup hook session-start|post-tool-use|session-end < HOOK-INPUT-JSON",
		Description: "Reads the JSON that Claude Code sends a hook on stdin; the owner is its session_id.\n" +
			"session-start registers the owner's lease for the Claude Code process and prints the\n" +
			"session's claims (Claude Code adds them to the context). post-tool-use renews the lease\n" +
			"at most once a minute and prints nothing. session-end releases what the session still\n" +
			"holds, or keeps it when the board's config.yaml says keep_on_session_end: true.\n" +
			"A hook never fails the Claude Code session: errors go to stderr and it exits 0.",
		Action: func(c *ucli.Context) error {
			event := c.Args().First()
			if c.NArg() != 1 {
				event = "?"
			}
			if err := r.hook(event); err != nil {
				fmt.Fprintf(r.env.Stderr, "pickup: hook %s: %s\n", sanitize(event), sanitize(err.Error()))
			}
			return nil
		},
	}
}

// hookInput is what pickup reads of the JSON a Claude Code hook receives.
type hookInput struct {
	SessionID string
	Cwd       string
}

// parseHookInput reads the fields pickup needs from a hook's JSON input. It
// stops as soon as it has them: Claude Code sends session_id and cwd first,
// before a tool's input and response, which may be large.
func parseHookInput(data []byte) (hookInput, error) {
	var in hookInput
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return in, errors.New("the input is not a JSON object (pickup hook reads what Claude Code sends on stdin)")
	}
	for dec.More() {
		t, err := dec.Token()
		var val json.RawMessage
		if err == nil {
			err = dec.Decode(&val)
		}
		if err != nil {
			if in.SessionID != "" {
				break // the rest was cut at maxHookInput, or is broken: not needed
			}
			return in, fmt.Errorf("read input: %w", err)
		}
		key, _ := t.(string)
		switch key {
		case "session_id":
			_ = json.Unmarshal(val, &in.SessionID)
		case "cwd":
			_ = json.Unmarshal(val, &in.Cwd)
		}
		if in.SessionID != "" && in.Cwd != "" {
			break
		}
	}
	if in.SessionID == "" {
		return in, errors.New("the input has no session_id")
	}
	return in, nil
}

// hook runs one hook event with the JSON input on stdin.
func (r *run) hook(event string) error {
	switch event {
	case "session-start", "post-tool-use", "session-end":
	default:
		return fmt.Errorf("unknown hook event %q: give session-start, post-tool-use or session-end", event)
	}
	data, err := io.ReadAll(io.LimitReader(r.env.Stdin, maxHookInput))
	// Drain the rest, so that Claude Code never writes into a closed pipe.
	_, _ = io.Copy(io.Discard, r.env.Stdin)
	if err != nil {
		return fmt.Errorf("read input: %w", err)
	}
	in, err := parseHookInput(data)
	if err != nil {
		return err
	}
	// The owner is the Claude Code session, not $PICKUP_OWNER: under
	// `pickup work -- claude ...` that names the worker, whose claim the
	// session must not release. An explicit --owner still wins.
	owner := r.owner
	if owner == "" {
		owner = in.SessionID
	}
	if err := sessions.ValidateOwner(owner); err != nil {
		return fmt.Errorf("session_id: %w", err)
	}
	if in.Cwd != "" && filepath.IsAbs(in.Cwd) {
		env := *r.env
		env.Getwd = func() (string, error) { return in.Cwd, nil }
		r.env = &env
	}
	dir, err := r.boardDir()
	if err != nil {
		return err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return err
	}
	switch event {
	case "post-tool-use":
		return r.hookPostToolUse(dir, owner)
	case "session-start":
		return r.hookSessionStart(owner)
	default:
		return r.hookSessionEnd(owner)
	}
}

// claudeRuntimeDir is <board>/.pickup/claude: the hooks' machine-local files.
func claudeRuntimeDir(boardDir string) string {
	return filepath.Join(boardDir, sessions.RuntimeDirName, "claude")
}

func claudeBeatPath(boardDir, owner string) string {
	return filepath.Join(claudeRuntimeDir(boardDir), "beats", owner)
}

func claudePidPath(boardDir string, pid int) string {
	return filepath.Join(claudeRuntimeDir(boardDir), "pids", strconv.Itoa(pid)+".json")
}

// hookPostToolUse renews the lease at most once per claudeBeatEvery. The
// fast path, taken after almost every tool use, is one stat of the owner's
// timestamp file.
func (r *run) hookPostToolUse(boardDir, owner string) error {
	now := r.env.Now()
	beat := claudeBeatPath(boardDir, owner)
	if info, err := os.Stat(beat); err == nil {
		if age := now.Sub(info.ModTime()); age >= 0 && age < claudeBeatEvery {
			return nil
		}
	}
	b, err := r.board()
	if errors.Is(err, sessions.ErrNoBoard) {
		return nil // hooks installed, no board (yet): nothing to keep alive
	}
	if err != nil {
		return err
	}
	if err := claudeTouch(beat, now); err != nil {
		return err
	}
	p, err := r.ownerProcess()
	if err != nil {
		return err
	}
	// Register renews the heartbeat and, should the lease name another
	// process (one kept at the end of an earlier run of this session),
	// gives it to this one.
	_, err = r.leases(b).Register(owner, p)
	return err
}

// claudeTouch sets path's modification time to t, creating it if needed.
func claudeTouch(path string, t time.Time) error {
	if err := os.Chtimes(path, t, t); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		return err
	}
	return os.Chtimes(path, t, t)
}

// claudePidRecord maps a Claude Code process to the session it runs.
type claudePidRecord struct {
	Owner   string       `json:"owner"`
	Process proc.Process `json:"process"`
}

// hookSessionStart registers the owner's lease for the Claude Code process,
// records which session that process runs, exports the session id to the
// Bash tool, and prints what the session holds.
func (r *run) hookSessionStart(owner string) error {
	b, err := r.board()
	if errors.Is(err, sessions.ErrNoBoard) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	if p, err := r.ownerProcess(); err != nil {
		errs = append(errs, err)
	} else {
		if _, err := r.leases(b).Register(owner, p); err != nil {
			errs = append(errs, err)
		}
		if err := writeClaudePid(b.Dir, claudePidRecord{Owner: owner, Process: p}); err != nil {
			errs = append(errs, err)
		}
	}
	if err := claudeTouch(claudeBeatPath(b.Dir, owner), r.env.Now()); err != nil {
		errs = append(errs, err)
	}
	r.pruneClaudeRecords(b)
	if err := r.exportSessionID(owner); err != nil {
		errs = append(errs, err)
	}
	if err := r.printClaims(b, owner); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// pruneClaudeRecords forgets the Claude Code processes that ended without a
// SessionEnd (a crash, a killed terminal): their pid records, throttle
// files, and their leases if they hold nothing (a lease with claims stays:
// it is how next finds those claims and returns them).
func (r *run) pruneClaudeRecords(b *sessions.Board) {
	dir := filepath.Dir(claudePidPath(b.Dir, 0))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	env := proc.Env{Hostname: r.env.Hostname}
	leases := r.leases(b)
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		rec, ok := readClaudePid(path)
		if !ok || sessions.ValidateOwner(rec.Owner) != nil {
			continue
		}
		if p, err := env.Lookup(rec.Process.PID); err == nil && p == rec.Process {
			continue // still running
		}
		if rec.Process.Host != "" && rec.Process.Host != env.Self().Host {
			continue
		}
		_ = os.Remove(path)
		_ = os.Remove(claudeBeatPath(b.Dir, rec.Owner))
		if held, err := b.ListOwner(rec.Owner); len(held) > 0 || (err != nil && !errors.Is(err, fs.ErrNotExist)) {
			continue
		}
		if l, err := leases.Get(rec.Owner); err == nil && l.Process == rec.Process {
			_ = leases.Remove(rec.Owner)
		}
	}
}

func writeClaudePid(boardDir string, rec claudePidRecord) error {
	path := claudePidPath(boardDir, rec.Process.PID)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return fsx.WriteReplace(path, append(data, '\n'), 0o644, false)
}

// exportSessionID appends `export CLAUDE_SESSION_ID=<id>` to the file that
// Claude Code gives SessionStart hooks in $CLAUDE_ENV_FILE and sources
// before each Bash command, so that pickup run by the agent without --owner
// finds the hooks' owner. The id is a valid owner name: no quoting needed.
func (r *run) exportSessionID(owner string) error {
	path := r.env.Getenv("CLAUDE_ENV_FILE")
	if path == "" {
		return nil
	}
	line := "export CLAUDE_SESSION_ID=" + owner + "\n"
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if bytes.HasSuffix(old, []byte(line)) || bytes.HasPrefix(old, []byte(line)) || bytes.Contains(old, []byte("\n"+line)) {
		return nil
	}
	if len(old) > 0 && old[len(old)-1] != '\n' {
		line = "\n" + line
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// printClaims prints, for Claude's context, who the session is on the board
// and what it holds.
func (r *run) printClaims(b *sessions.Board, owner string) error {
	list, err := b.ListOwner(owner)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	waiting := 0
	if entries, err := os.ReadDir(b.StateDir(sessions.Todo, "")); err == nil {
		for _, e := range entries {
			if _, ok := sessions.IsSessionName(e.Name()); ok && e.Type().IsRegular() {
				waiting++
			}
		}
	}
	r.printf("pickup: this Claude Code session is owner %s on the board %s. Pass `--owner %s` to every pickup command.\n", owner, b.Dir, owner)
	if len(list) == 0 {
		r.printf("It holds no sessions; %d wait in todo/. /pickup claims one.\n", waiting)
		return nil
	}
	r.printf("It holds %d session(s), claimed earlier and still yours:\n", len(list))
	for _, s := range list {
		r.printf("- %s\n  file: %s\n", describe(s), s.Path)
	}
	r.printf("Finish one with `pickup --owner %s done ID`, hand it over with /handoff, or give it back with `pickup --owner %s release ID`. Never move, edit or delete board files by hand.\n", owner, owner)
	return nil
}

// hookSessionEnd releases what the session still holds and ends its lease;
// with keep_on_session_end in the board's config.yaml it keeps the claims,
// under a lease without a process: no longer tied to this Claude Code
// process, they stay the session's until it resumes (claude --resume) or
// `pickup reap` finds them older than the stale period.
func (r *run) hookSessionEnd(owner string) error {
	b, err := r.board()
	if errors.Is(err, sessions.ErrNoBoard) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	cfg, err := b.Config()
	if err != nil {
		errs = append(errs, fmt.Errorf("%w; releasing, the default", err))
	}
	leases := r.leases(b)
	list, _ := b.ListOwner(owner)
	if cfg.KeepOnSessionEnd && len(list) > 0 {
		host, _ := r.env.Hostname()
		if _, err := leases.Register(owner, proc.Process{Host: host}); err != nil {
			errs = append(errs, err)
		}
		for _, s := range list {
			r.printf("kept %s (keep_on_session_end)\n", describe(s))
		}
	} else {
		cl, err := claim.New(b, owner)
		if err != nil {
			return err
		}
		released, err := cl.ReleaseAll()
		if err != nil {
			errs = append(errs, err)
		}
		for _, s := range released {
			r.printf("released %s\n", describe(s))
		}
		if err := leases.Remove(owner); err != nil {
			errs = append(errs, err)
		}
	}
	_ = os.Remove(claudeBeatPath(b.Dir, owner))
	r.forgetPid(b.Dir, owner)
	return errors.Join(errs...)
}

// forgetPid removes the record of the Claude Code process running owner,
// unless it already names a later session of that process (after /clear).
func (r *run) forgetPid(boardDir, owner string) {
	p, err := r.ownerProcess()
	if err != nil {
		return
	}
	path := claudePidPath(boardDir, p.PID)
	if rec, ok := readClaudePid(path); ok && rec.Owner == owner {
		_ = os.Remove(path)
	}
}

func readClaudePid(path string) (claudePidRecord, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return claudePidRecord{}, false
	}
	var rec claudePidRecord
	if json.Unmarshal(data, &rec) != nil {
		return claudePidRecord{}, false
	}
	return rec, true
}

// claudeOwner returns the session that the SessionStart hook recorded for
// the Claude Code process that ran this pickup (the process a lease would
// follow: --pid, $PICKUP_PID, else the parent walk), if its record is of
// that very process (same start time), not of an earlier one with its pid.
// ownerName falls back on it when no option or variable names the owner,
// so that an agent that forgot --owner still acts as its session.
func (r *run) claudeOwner() (string, bool) {
	dir, err := r.boardDir()
	if err != nil {
		return "", false
	}
	pid := r.pid
	if pid == 0 {
		if n, err := strconv.Atoi(r.env.Getenv("PICKUP_PID")); err == nil && n > 0 {
			pid = n
		} else {
			pid = invokerPID()
		}
	}
	rec, ok := readClaudePid(claudePidPath(dir, pid))
	if !ok || rec.Process.PID != pid || sessions.ValidateOwner(rec.Owner) != nil {
		return "", false
	}
	p, err := proc.Env{Hostname: r.env.Hostname}.Lookup(pid)
	if err != nil || p != rec.Process {
		return "", false
	}
	return rec.Owner, true
}
