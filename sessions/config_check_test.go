package sessions

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestParseConfig: every mistake of a config.yaml is found at once, each
// with its line and a fix; good files give their settings.
func TestParseConfig(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want Config
		// problems are "line: start of the message", in order.
		problems []string
	}{
		{name: "empty", yaml: ""},
		{name: "comments only", yaml: "# nothing set\n"},
		{name: "every setting", yaml: "stale: 45m\ncommit: true\nkeep_on_session_end: yes\nauto_next: true\nmax_attempts: -1\n",
			want: Config{Stale: 45 * time.Minute, Commit: true, KeepOnSessionEnd: true, AutoNext: true, MaxAttempts: -1}},
		{name: "no value is the default", yaml: "stale:\ncommit:\n"},
		{name: "lineup_age", yaml: "lineup_age: 250ms\n", want: Config{LineupAge: 250 * time.Millisecond}},
		{name: "lineup_age 0s lists every time", yaml: "lineup_age: 0s\n", want: Config{LineupAge: -1}},
		{name: "lineup_age negative", yaml: "lineup_age: -1s\n", problems: []string{`1: lineup_age: "-1s" is not a duration: write lineup_age: 1s`}},
		{name: "network_timeout", yaml: "network_timeout: 5s\n", want: Config{NetworkTimeout: 5 * time.Second}},
		{name: "network_timeout too short", yaml: "network_timeout: 10ms\n", problems: []string{`1: network_timeout: "10ms" is not a duration from 1s to 10m0s: write network_timeout: 30s`}},
		{name: "network_timeout too long", yaml: "network_timeout: 2h\n", problems: []string{`1: network_timeout: "2h" is not a duration from 1s to 10m0s`}},
		{name: "network_timeout no unit", yaml: "network_timeout: 30\n", problems: []string{`1: network_timeout: 30 is not a duration`}},
		{name: "quoted key and comments", yaml: "# c\n\"commit\": true # on\n", want: Config{Commit: true}},
		{name: "document marker", yaml: "---\nmax_attempts: 5\n", want: Config{MaxAttempts: 5}},
		{name: "CRLF", yaml: "commit: true\r\nstale: 1h\r\n", want: Config{Commit: true, Stale: time.Hour}},
		{name: "unknown, near", yaml: "stale: 45m\ncomit: true\n",
			problems: []string{`2: unknown setting "comit": did you mean commit? (the settings are stale, commit, keep_on_session_end, auto_next, max_attempts, shared, shared_branch, shared_fetch, lineup_age, network_timeout, history, history_every)`}},
		{name: "unknown, dashes", yaml: "max-attempts: 2\n",
			problems: []string{`1: unknown setting "max-attempts": did you mean max_attempts?`}},
		{name: "unknown, far", yaml: "colour: blue\n",
			problems: []string{`1: unknown setting "colour": remove it or correct its name`}},
		{name: "y is a key as written", yaml: "y: 1\n",
			problems: []string{`1: unknown setting "y"`}},
		{name: "commit maybe", yaml: "max_attempts: 2\ncommit: maybe\n",
			problems: []string{`2: commit: "maybe" is neither true nor false: write commit: true (every transition becomes a git commit) or commit: false`}},
		{name: "commit 1", yaml: "commit: 1\n", problems: []string{`1: commit: 1 is neither true nor false`}},
		{name: "keep a list", yaml: "keep_on_session_end: [a]\n", problems: []string{`1: keep_on_session_end: a list is neither`}},
		{name: "max_attempts words", yaml: "max_attempts: three\n", problems: []string{`1: max_attempts: "three" is not a whole number: write max_attempts: 3`}},
		{name: "max_attempts fraction", yaml: "max_attempts: 2.5\n", problems: []string{`1: max_attempts: 2.5 is not a whole number`}},
		{name: "stale without unit", yaml: "stale: 30\n", problems: []string{`1: stale: 30 has no unit: write stale: 30m`}},
		{name: "stale words", yaml: "stale: soon\n", problems: []string{`1: stale: "soon" is not a duration: write a positive duration`}},
		{name: "stale zero", yaml: "stale: 0s\n", problems: []string{`1: stale: "0s" is not positive`}},
		{name: "stale nested", yaml: "stale:\n  minutes: 3\n", problems: []string{`1: stale: a nested mapping is not a duration`}},
		{name: "twice", yaml: "commit: true\nstale: 1m\ncommit: false\n",
			problems: []string{`3: commit is set twice (first on line 1): keep one`}},
		{name: "several", yaml: "stale: soon\nmax_attempts: three\nkeep_on_session_end: true\nkeep_on_session_end: false\n",
			problems: []string{`1: stale: "soon"`, `2: max_attempts: "three"`, `4: keep_on_session_end is set twice (first on line 3)`}},
		{name: "not a mapping", yaml: "- commit\n- true\n", problems: []string{`1: the file is not a list of settings`}},
		{name: "unclosed list", yaml: "stale: 45m\ncommit: [true\n", problems: []string{`2: not valid YAML: `}},
		{name: "unclosed quote", yaml: "stale: '45m\ncommit: true\n", problems: []string{`1: not valid YAML: `}},
		{name: "mapping in a value", yaml: "stale: 45m\ncommit: a: b\n", problems: []string{`2: not valid YAML: mapping values are not allowed in this context`}},
		{name: "flow style: the key's line", yaml: "# settings\n{stale: 1h,\n commit: maybe}\n", problems: []string{`3: commit: "maybe"`}},
		{name: "flow style twice: never line 0", yaml: "{stale: 1m, stale: 2m}\n", problems: []string{`1: stale is set twice (first on line 1)`}},
		{name: "flow style quoted key", yaml: "\n{\"stale\": 1ns}\n", problems: []string{`2: stale: 1ns is out of range`}},
		{name: "history", yaml: "history: origin\nhistory_every: 2s\n", want: Config{History: "origin", HistoryEvery: 2 * time.Second}},
		{name: "history off", yaml: "history: off\n", want: Config{History: "off"}},
		{name: "history_every too short", yaml: "history_every: 10ms\n", problems: []string{`1: history_every: 10ms is out of range: write a duration from 1s to 24h`}},
		{name: "history not a remote", yaml: "history: a b\n", problems: []string{`1: history: "a b" is not a git remote name`}},
		{name: "stale 1ns", yaml: "stale: 1ns\n", problems: []string{`1: stale: 1ns is out of range: write a duration from 1s to 720h`}},
		{name: "stale 100000h", yaml: "commit: true\nstale: 100000h\n", problems: []string{`2: stale: 100000h is out of range: write a duration from 1s to 720h`}},
		{name: "stale at the bounds", yaml: "stale: 1s\n", want: Config{Stale: time.Second}},
		{name: "stale 720h", yaml: "stale: 720h\n", want: Config{Stale: 720 * time.Hour}},
		{name: "lineup_age 100000h", yaml: "lineup_age: 100000h\n", problems: []string{`1: lineup_age: 100000h is out of range: write a duration from 0s to 24h`}},
		{name: "lineup_age 24h", yaml: "lineup_age: 24h\n", want: Config{LineupAge: 24 * time.Hour}},
		{name: "shared_fetch 1ns", yaml: "shared_fetch: 1ns\n", problems: []string{`1: shared_fetch: 1ns is out of range: write a duration from 100ms to 24h`}},
		{name: "shared_fetch 48h", yaml: "shared_fetch: 48h\n", problems: []string{`1: shared_fetch: 48h is out of range`}},
		{name: "shared_fetch 100ms", yaml: "shared_fetch: 100ms\n", want: Config{SharedFetch: 100 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := parseConfig("config.yaml", []byte(tt.yaml))
			if len(tt.problems) == 0 {
				if err != nil {
					t.Fatalf("error %v, want none", err)
				}
				if got != tt.want {
					t.Errorf("config %+v, want %+v", got, tt.want)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, ErrBadConfig) {
				t.Fatalf("error %v, want a *ConfigError matching ErrBadConfig", err)
			}
			if len(ce.Problems) != len(tt.problems) {
				t.Fatalf("%d problem(s) %+v, want %d", len(ce.Problems), ce.Problems, len(tt.problems))
			}
			for i, p := range ce.Problems {
				line, msg, _ := strings.Cut(tt.problems[i], ": ")
				if got := strings.TrimSpace(line); got != strconv.Itoa(p.Line) || !strings.HasPrefix(p.Message, msg) {
					t.Errorf("problem %d: line %d %q\nwant line %s %q...", i, p.Line, p.Message, line, msg)
				}
			}
			if got != (Config{}) {
				t.Errorf("a bad file gave settings %+v, want none", got)
			}
		})
	}
}

// TestConfigErrorMessage: the message names the file and line of each
// problem; Board.Config and ConfigLine read the board's file.
func TestConfigErrorMessage(t *testing.T) {
	b, err := Init(filepath.Join(t.TempDir(), "board"))
	if err != nil {
		t.Fatal(err)
	}
	if c, err := b.Config(); err != nil || c != (Config{}) {
		t.Fatalf("no config.yaml: %+v, %v; want defaults", c, err)
	}
	path := filepath.Join(b.Dir, ConfigFile)
	if err := os.WriteFile(path, []byte("# settings\ncommit: true\nmax_attempts: x\nfoo: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = b.Config()
	want := path + `:3: max_attempts: "x" is not a whole number`
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "; "+path+`:4: unknown setting "foo"`) {
		t.Errorf("error %v\nwant it to start %q and name line 4", err, want)
	}
	if got := b.ConfigLine("commit"); got != 2 {
		t.Errorf("ConfigLine(commit) = %d, want 2", got)
	}
	if got := b.ConfigLine("stale"); got != 0 {
		t.Errorf("ConfigLine(stale) = %d, want 0 (not set)", got)
	}
}
