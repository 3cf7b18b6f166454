package sessions

// Checking config.yaml whole, with the line of every mistake: a setting
// that pickup reads only when it needs it would let a command act first
// and fail after (commit: maybe was found at the first commit, once the
// transition had happened), so every command that changes the board reads
// and checks the whole file before it does anything.

import (
	"errors"
	"fmt"
	"github.com/pickup-dev/pickup/internal/arbiter/dburl"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pickup-dev/pickup/internal/fsx"
	"time"

	"gopkg.in/yaml.v2"
)

// ErrBadConfig marks a config.yaml that pickup cannot use as it is: an
// unknown setting, a value of the wrong kind, YAML that does not parse.
var ErrBadConfig = errors.New("bad config.yaml")

// ConfigProblem is one mistake in config.yaml.
type ConfigProblem struct {
	// Line is where it is, from 1; 0 when it cannot be told.
	Line int `json:"line,omitempty"`
	// Message says what is wrong and what to write instead.
	Message string `json:"message"`
}

// ConfigError lists every mistake of a config.yaml. It matches
// ErrBadConfig.
type ConfigError struct {
	Path     string
	Problems []ConfigProblem
}

func (e *ConfigError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = e.Path + ": " + p.Message
		if p.Line > 0 {
			parts[i] = fmt.Sprintf("%s:%d: %s", e.Path, p.Line, p.Message)
		}
	}
	return strings.Join(parts, "; ")
}

func (e *ConfigError) Unwrap() error { return ErrBadConfig }

// settingNames are the settings config.yaml may hold, in the order the
// documentation gives them.
func settingNames() []string {
	return []string{"stale", "commit", "keep_on_session_end", "auto_next", "max_attempts", "shared", "shared_branch", "shared_fetch", "lineup_age", "network_timeout", "history", "history_every"}
}

// ConfigLine returns the line of config.yaml that sets name, or 0 if none
// does (or the file cannot be read): for messages about a setting.
func (b *Board) ConfigLine(name string) int {
	data, err := fsx.ReadRegular(filepath.Join(b.Dir, ConfigFile)) // never follows a link or waits on a pipe
	if err != nil {
		return 0
	}
	_, lines, _ := parseConfig("", data)
	return lines[name]
}

// parseConfig reads config.yaml's content: the settings, the line of each
// one set, and a *ConfigError listing every mistake, if any.
func parseConfig(path string, data []byte) (Config, map[string]int, error) {
	var c Config
	lines := map[string]int{}
	var items yaml.MapSlice
	if err := yaml.Unmarshal(data, &items); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return c, lines, &ConfigError{Path: path, Problems: []ConfigProblem{{Line: 1,
				Message: `the file is not a list of settings: write one "name: value" per line, such as commit: true`}}}
		}
		return c, lines, &ConfigError{Path: path, Problems: []ConfigProblem{{Line: brokenLine(data),
			Message: fmt.Sprintf(`not valid YAML: %s: write one "name: value" per line, such as commit: true`, yamlReason(err))}}}
	}
	keys := topLevelKeys(data)
	flowFrom := 0
	var problems []ConfigProblem
	for i, item := range items {
		name := fmt.Sprint(item.Key)
		line := 0
		switch {
		case len(keys) == len(items):
			// One key line per setting, in order: the usual file. (The
			// text is what the user wrote: YAML reads a key y as true.)
			name, line = keys[i].name, keys[i].line
		default:
			for _, k := range keys {
				if k.name == name {
					line = k.line
					break
				}
			}
		}
		if line == 0 {
			// Flow style ({stale: 1m, commit: true}) or a key that spans
			// lines: where the key is written, from after the last one
			// found, else where the settings start. Never "line 0".
			line, flowFrom = flowKeyLine(data, name, flowFrom)
		}
		if first, ok := lines[name]; ok {
			problems = append(problems, ConfigProblem{Line: line,
				Message: fmt.Sprintf("%s is set twice (first on line %d): keep one", name, first)})
			continue
		}
		lines[name] = line
		if msg := applySetting(&c, name, item.Value); msg != "" {
			problems = append(problems, ConfigProblem{Line: line, Message: msg})
		}
	}
	if len(problems) > 0 {
		return Config{}, lines, &ConfigError{Path: path, Problems: problems}
	}
	return c, lines, nil
}

// applySetting sets name to v in c, or says what is wrong and how to write
// it instead.
func applySetting(c *Config, name string, v any) string {
	if v == nil {
		return "" // "name:" with no value: the default
	}
	switch name {
	case "stale":
		return setStale(c, v)
	case "commit":
		b, ok := v.(bool)
		if !ok {
			return fmt.Sprintf("commit: %s is neither true nor false: write commit: true (every transition becomes a git commit) or commit: false", describeValue(v))
		}
		c.Commit = b
	case "keep_on_session_end":
		b, ok := v.(bool)
		if !ok {
			return fmt.Sprintf("keep_on_session_end: %s is neither true nor false: write keep_on_session_end: true (a Claude Code session that ends keeps its claims) or keep_on_session_end: false", describeValue(v))
		}
		c.KeepOnSessionEnd = b
	case "auto_next":
		b, ok := v.(bool)
		if !ok {
			return fmt.Sprintf("auto_next: %s is neither true nor false: write auto_next: true (a Claude Code session that stops holding nothing is given the next session) or auto_next: false", describeValue(v))
		}
		c.AutoNext = b
	case "max_attempts":
		n, ok := v.(int)
		if !ok {
			return fmt.Sprintf("max_attempts: %s is not a whole number: write max_attempts: 3 (failures before a session is set aside in failed/; 0: the default, 3; a negative number: never)", describeValue(v))
		}
		c.MaxAttempts = n
	case "shared", "shared_branch":
		str, ok := v.(string)
		if name == "shared" && ok && dburl.IsURL(str) {
			if dburl.HasPassword(str) {
				return "shared: the database URL holds a password, which must not be in config.yaml (it is committed): remove it, and give it in ~/.pgpass or $PGPASSWORD"
			}
			c.Shared = str
			break
		}
		if !ok || str == "" || strings.ContainsAny(str, " \t:~^?*[\\") || strings.HasPrefix(str, "-") {
			return fmt.Sprintf("%s: %s is not a git remote or branch name: write %s: origin (pickup init --shared sets it)", name, describeValue(v), name)
		}
		if name == "shared" {
			c.Shared = str
		} else {
			if err := ValidBoardBranch(str); err != nil {
				return fmt.Sprintf("shared_branch: %v: write shared_branch: pickup (a branch of its own, never the code's)", err)
			}
			c.SharedBranch = str
		}
	case "shared_fetch":
		str, _ := v.(string)
		d, err := time.ParseDuration(str)
		if err != nil || d <= 0 {
			return fmt.Sprintf("shared_fetch: %s is not a positive duration: write shared_fetch: 10s (how often next --wait fetches a shared board)", describeValue(v))
		}
		if msg := outOfRange("shared_fetch", str, d, sharedFetchRange, "how often next --wait fetches a shared board"); msg != "" {
			return msg
		}
		c.SharedFetch = d
	case "history":
		str, ok := v.(string)
		if b, isBool := v.(bool); isBool && !b {
			str, ok = "off", true // history: off reads as false in YAML
		}
		if !ok || str == "" || strings.ContainsAny(str, " \t:~^?*[\\") || strings.HasPrefix(str, "-") {
			return fmt.Sprintf("history: %s is not a git remote name: write history: origin (the remote whose board branch gets a PostgreSQL board's history) or history: off", describeValue(v))
		}
		c.History = str
	case "history_every":
		str, _ := v.(string)
		d, err := time.ParseDuration(str)
		if err != nil || d <= 0 {
			return fmt.Sprintf("history_every: %s is not a positive duration: write history_every: 60s (the least time between two pushes of a PostgreSQL board's history)", describeValue(v))
		}
		if msg := outOfRange("history_every", str, d, historyEveryRange, "the least time between two pushes of a PostgreSQL board's history"); msg != "" {
			return msg
		}
		c.HistoryEvery = d
	case "network_timeout":
		str, _ := v.(string)
		d, err := time.ParseDuration(str)
		if err != nil || d < minNetworkTimeout || d > maxNetworkTimeout {
			return fmt.Sprintf("network_timeout: %s is not a duration from %s to %s: write network_timeout: 30s (how long pickup waits for a git remote that stopped answering before it gives up)", describeValue(v), minNetworkTimeout, maxNetworkTimeout)
		}
		c.NetworkTimeout = d
	case "lineup_age":
		str, _ := v.(string)
		d, err := time.ParseDuration(str)
		if err != nil || d < 0 {
			return fmt.Sprintf("lineup_age: %s is not a duration: write lineup_age: 1s (how long next trusts a full listing of todo/; 0s: list every time)", describeValue(v))
		}
		if msg := outOfRange("lineup_age", str, d, lineupAgeRange, "how long next trusts a full listing of todo/; 0s: list every time"); msg != "" {
			return msg
		}
		if d == 0 {
			d = -1 // Board.LineupAge's "always list"
		}
		c.LineupAge = d
	default:
		known := strings.Join(settingNames(), ", ")
		if near := nearestSetting(name); near != "" {
			return fmt.Sprintf("unknown setting %q: did you mean %s? (the settings are %s)", name, near, known)
		}
		return fmt.Sprintf("unknown setting %q: remove it or correct its name (the settings are %s)", name, known)
	}
	return ""
}

func setStale(c *Config, v any) string {
	const fix = "write a positive duration such as stale: 45m or stale: 2h"
	switch v := v.(type) {
	case string:
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Sprintf("stale: %q is not a duration: %s", v, fix)
		}
		if d <= 0 {
			return fmt.Sprintf("stale: %q is not positive: %s", v, fix)
		}
		if msg := outOfRange("stale", v, d, staleRange, "how long an owner whose process cannot be checked may go without a heartbeat before its sessions are reaped"); msg != "" {
			return msg
		}
		c.Stale = d
		return ""
	case int, float64:
		return fmt.Sprintf("stale: %v has no unit: write stale: %vm for minutes (s: seconds, h: hours)", v, v)
	}
	return fmt.Sprintf("stale: %s is not a duration: %s", describeValue(v), fix)
}

// durationRange is the span of values that make sense for a setting.
type durationRange struct{ min, max time.Duration }

// The ranges of the duration settings. Outside them a value is a mistake
// (a unit mistyped: 1ns for 1m, 100000h for 100s), not a choice. They are
// wide on purpose: tests and demos run with a stale of seconds and fetch
// several times a second, and a board may trust a listing for hours.
//   - stale: from 1s (under that, a live agent between two commands is
//     reaped) to 720h (30 days; beyond, a dead owner's claims outlive
//     anyone waiting for them);
//   - lineup_age: up to 24h (sessions copied into todo/ by hand are seen
//     at most this late);
//   - shared_fetch: from 100ms (more often hammers the remote) to 24h;
//   - history_every: from 1s (tests and demos; a hosted remote wants a
//     minute or more) to 24h.
var (
	historyEveryRange = durationRange{time.Second, 24 * time.Hour}
	staleRange        = durationRange{time.Second, 720 * time.Hour}
	lineupAgeRange    = durationRange{0, 24 * time.Hour}
	sharedFetchRange  = durationRange{100 * time.Millisecond, 24 * time.Hour}
)

// outOfRange says what is wrong with setting name = d (written as given)
// if d is outside r, else "".
func outOfRange(name, given string, d time.Duration, r durationRange, what string) string {
	if d >= r.min && d <= r.max {
		return ""
	}
	return fmt.Sprintf("%s: %s is out of range: write a duration from %s to %s (%s)", name, given, fmtRange(r.min), fmtRange(r.max), what)
}

// fmtRange writes a range's bound as a user would: 1m, 168h, 0s.
func fmtRange(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}

// describeValue names a YAML value for a message: strings quoted, lists
// and mappings by their kind.
func describeValue(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case []any:
		return "a list"
	case yaml.MapSlice, map[any]any:
		return "a nested mapping"
	}
	return fmt.Sprint(v)
}

// nearestSetting returns the setting name closest to a misspelt one
// (case, one or two letters, - for _), or "" if none is close.
func nearestSetting(name string) string {
	norm := strings.ReplaceAll(strings.ToLower(name), "-", "_")
	best, bestDist := "", 3
	for _, s := range settingNames() {
		if d := editDistance(norm, s); d < bestDist {
			best, bestDist = s, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// configKey is a top-level key as written and its line.
type configKey struct {
	name string
	line int
}

// topLevelKeys finds the keys written at the start of a line, in order:
// the lines of a block mapping's settings. yaml.v2 does not say where a
// key is, and a config.yaml is a flat list of settings, so this suffices;
// a file it cannot follow (flow style) gets problems without lines.
func topLevelKeys(data []byte) []configKey {
	var out []configKey
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" {
			continue
		}
		switch line[0] {
		case ' ', '\t', '#', '{', '[', '?':
			continue // a value's continuation, a comment, flow style
		case '-', '.':
			if !isPlainKeyStart(line) {
				continue // a document marker or a list item
			}
		}
		name, ok := cutConfigKey(line)
		if ok {
			out = append(out, configKey{name: name, line: i + 1})
		}
	}
	return out
}

// flowKeyLine finds key name written in data at or after byte from (as
// name: or "name": or 'name':) and returns its line and the byte after it;
// if it is not found, the line of the file's first setting (the first line
// that is neither blank nor a comment) and from.
func flowKeyLine(data []byte, name string, from int) (int, int) {
	text := string(data)
	for pos := from; pos < len(text); {
		i := strings.Index(text[pos:], name)
		if i < 0 {
			break
		}
		start, end := pos+i, pos+i+len(name)
		pos = end
		before := byte(' ')
		if start > 0 {
			before = text[start-1]
		}
		after := strings.TrimLeft(text[end:], " \t")
		if q := before; q == '"' || q == '\'' {
			if !strings.HasPrefix(after, string(q)) {
				continue
			}
			after = strings.TrimLeft(after[1:], " \t")
			if start > 1 {
				before = text[start-2]
			} else {
				before = ' '
			}
		}
		if strings.HasPrefix(after, ":") && strings.ContainsRune(" \t\n{,", rune(before)) {
			return strings.Count(text[:start], "\n") + 1, end
		}
	}
	for i, line := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
			return i + 1, from
		}
	}
	return 1, from
}

// isPlainKeyStart reports whether a line starting with '-' or '.' is
// still a key ("-x: 1"), not a document marker or a list item.
func isPlainKeyStart(line string) bool {
	return (line[0] == '-' || line[0] == '.') && len(line) > 1 && line[1] != ' ' && line[1] != '-' && line[1] != '.'
}

// cutConfigKey returns the key of a "key: value" line, unquoted.
func cutConfigKey(line string) (string, bool) {
	if q := line[0]; q == '"' || q == '\'' {
		end := strings.IndexByte(line[1:], q)
		if end < 0 {
			return "", false
		}
		rest := strings.TrimLeft(line[end+2:], " \t")
		if !strings.HasPrefix(rest, ":") {
			return "", false
		}
		return line[1 : end+1], true
	}
	for i := 0; i < len(line); i++ {
		if line[i] == ':' && (i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\t') {
			return strings.TrimRight(line[:i], " \t"), true
		}
		if line[i] == '#' && i > 0 && (line[i-1] == ' ' || line[i-1] == '\t') {
			break // a comment
		}
	}
	return "", false
}

// brokenLine is the first line at which data stops being valid YAML: the
// shortest run of its first lines that does not parse. (yaml.v2 gives no
// line for some errors, and for an unclosed quote the line of the end of
// the file.) Only called for a file that does not parse.
func brokenLine(data []byte) int {
	lines := strings.SplitAfter(string(data), "\n")
	var prefix strings.Builder
	for i, line := range lines {
		prefix.WriteString(line)
		var items yaml.MapSlice
		if err := yaml.Unmarshal([]byte(prefix.String()), &items); err != nil {
			return i + 1
		}
	}
	return 0
}

// yamlReason is a YAML parse error without its "yaml: line N: " prefix:
// the caller gives the line.
func yamlReason(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, after, ok := strings.Cut(rest, ": "); ok && strings.Trim(n, "0123456789") == "" {
			return after
		}
	}
	return msg
}
