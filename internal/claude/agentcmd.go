package claude

import (
	"slices"
	"strings"
)

// Which pickup commands run without asking. An agent needs these
// (AgentCommands); reap, doctor --fix, lock release --force, lock cleanup
// and init change other agents' work or the setup, so they are never
// approved here: Claude Code asks as it would without pickup. Nor is
// `lock run`, which runs any command it is given: approving it would
// approve that command.

// AgentCommands are the subcommands the PreToolUse hook approves.
var AgentCommands = []string{"next", "claim", "done", "release", "show", "list", "new", "heartbeat", "status", "log",
	"lock acquire", "lock check", "lock release"}

// refusedFlags are flags that an approved command must not carry: another
// owner's name or process (--owner, --pid), or forcing (--force).
var refusedFlags = []string{"owner", "pid", "force", "fix"}

// agentCmd is one simple invocation of an agent's pickup subcommand.
type agentCmd struct {
	name string   // "next", "lock acquire", ...
	dirs []string // the values of --dir, wherever given
	args []string // the words after the subcommand that are not flags or their values
}

// newValueFlags are the flags of `pickup new` that take the next word as
// their value (when not written --flag=value).
var newValueFlags = []string{"title", "t", "priority", "p", "tag", "depends-on"}

// agentCommand reports whether a Bash command is one simple invocation of
// an agent's pickup subcommand, and parses it. Anything else is not
// judged: a command with a shell operator, substitution, redirection,
// variable, glob or escape in it (`pickup next && rm x`, `pickup new - <<EOF`)
// could run more than pickup, so Claude Code's own rules decide it. Where
// it reads and writes (--dir, the FILE of new) the caller checks.
func agentCommand(command string) (agentCmd, bool) {
	words, ok := shellWords(command)
	if !ok || len(words) < 2 || words[0] != "pickup" {
		return agentCmd{}, false
	}
	var c agentCmd
	var sub []string
	for i := 1; i < len(words); i++ {
		w := words[i]
		if name, isFlag := flagName(w); isFlag && w != "-" {
			if slices.Contains(refusedFlags, name) {
				return agentCmd{}, false
			}
			_, value, hasValue := strings.Cut(w, "=")
			switch {
			case name == "dir" && hasValue:
				c.dirs = append(c.dirs, value)
			case name == "dir":
				if i+1 >= len(words) {
					return agentCmd{}, false
				}
				i++
				c.dirs = append(c.dirs, words[i])
			case !hasValue && len(sub) > 0 && sub[0] == "new" && slices.Contains(newValueFlags, name):
				i++ // its value, not a FILE
			}
			continue
		}
		if len(sub) < 1 || (sub[0] == "lock" && len(sub) < 2) {
			sub = append(sub, w)
			continue
		}
		c.args = append(c.args, w)
	}
	if len(sub) == 0 {
		return agentCmd{}, false
	}
	c.name = strings.Join(sub, " ")
	if !slices.Contains(AgentCommands, c.name) {
		return agentCmd{}, false
	}
	return c, true
}

// flagName returns the name of a flag word (-x, --name, --name=value).
func flagName(w string) (string, bool) {
	if len(w) < 2 || w[0] != '-' {
		return "", false
	}
	name := strings.TrimLeft(w, "-")
	name, _, _ = strings.Cut(name, "=")
	return name, true
}

// shellWords splits a command into words the way sh would, if it is made
// only of plain words: letters, digits and _ - . / : @ , + % = between
// spaces, or such text in single quotes, or in double quotes without $, `
// or \. Anything else (; & | < > $ ` ( ) * ? [ ~ # ! \ newline, ...) makes it
// not simple: false.
func shellWords(command string) ([]string, bool) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(command); i++ {
		c := command[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'' || c == '"':
			end := strings.IndexByte(command[i+1:], c)
			if end < 0 {
				return nil, false
			}
			quoted := command[i+1 : i+1+end]
			if c == '"' && strings.ContainsAny(quoted, "$`\\!") {
				return nil, false
			}
			if strings.ContainsAny(quoted, "\n\r") {
				return nil, false
			}
			cur.WriteString(quoted)
			inWord = true
			i += end + 1
		case plainByte(c):
			cur.WriteByte(c)
			inWord = true
		default:
			return nil, false
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, true
}

func plainByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("_-./:@,+%=", c) >= 0
}
