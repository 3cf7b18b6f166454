package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pickup-dev/pickup/internal/help"
	ucli "github.com/urfave/cli/v2"
)

// helpTopic answers `pickup help NAME` when NAME is a help topic, `topics`,
// or neither a topic nor a command (a usage error). It returns false when
// urfave/cli's own help should answer: no name (pickup's help), or a
// command's name (that command's help). Commands come first: `pickup help
// lock` is the lock command's help, `pickup help locks` the topic; no
// topic is named like a command (TestTopicNamesAreNotCommands), but for
// mcp, whose topic is the command's manual.
func (r *run) helpTopic(global []ucli.Flag, args []string) (int, bool) {
	if c := commandArg(global, args); c != "help" && c != "h" {
		return 0, false
	}
	name := ""
	seenHelp := false
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if len(a) > 1 && a[0] == '-' {
			if a == "--json" || a == "-json" {
				r.json = true // its error, if any, as JSON on stdout too
			}
			if takesValue(global, a) {
				i++
			}
			continue
		}
		if !seenHelp {
			seenHelp = true // the "help" itself
			continue
		}
		name = a
		break
	}
	if name == "" || (isCommand(name) && name != mcpHasTopic) {
		return 0, false
	}
	if name == "topics" {
		fmt.Fprint(r.env.Stdout, help.List())
		return ExitOK, true
	}
	if text, ok := help.Text(name); ok {
		fmt.Fprint(r.env.Stdout, text)
		return ExitOK, true
	}
	return r.report(unknownHelpError{name}), true
}

// isCommand says whether name is a command or one of its aliases (help
// included: `pickup help help`).
func isCommand(name string) bool {
	if name == "help" || name == "h" {
		return true
	}
	for _, spec := range commandTable() {
		if slices.Contains(spec.names, name) {
			return true
		}
	}
	return false
}

// unknownHelpError is `pickup help NAME` for a NAME that is neither a
// command nor a topic: a usage error whose hint lists where to look.
type unknownHelpError struct{ name string }

func (e unknownHelpError) Error() string {
	return fmt.Sprintf("no command or help topic %q", e.name)
}

func (e unknownHelpError) Unwrap() error { return errUsage }

func (e unknownHelpError) Hint() string {
	return "`pickup help topics` lists the help topics, `pickup help` the commands"
}

// appDescription is pickup's help text: what a board is, where it and
// the owner come from, and the exit codes (from the exit-codes topic). It
// is made only for a run that may print it, not for every command.
func appDescription(global []ucli.Flag, args []string) string {
	if name := commandArg(global, args); name != "" && name != "help" && name != "h" || versionOnly(args) {
		return ""
	}
	return "A board is a directory: todo/<id>.md waits, doing/<owner>/<id>.md is claimed by <owner>,\n" +
		"done/<id>.md is finished. Every transition is one atomic rename, so of any number of\n" +
		"racing claimers exactly one wins.\n\n" +
		"Board: --dir, else $PICKUP_DIR, else .spx/sessions at the top of the git repository's\n" +
		"main work tree, else ./.spx/sessions.\n" +
		"Owner: --owner, else $PICKUP_OWNER, $CLAUDE_CODE_SESSION_ID, $CLAUDE_SESSION_ID,\n$CODEX_THREAD_ID, the Claude Code session that ran pickup, else <user>-<host> (your\nuser and host names, every character outside [A-Za-z0-9._-] made a -).\n\n" +
		topicLine() + "\n\n" +
		help.ExitCodeList()
}

// versionOnly reports whether args ask for the version and no help: such a
// run prints one line, and pickup --version is timed as pickup's start-up.
func versionOnly(args []string) bool {
	version := false
	for _, a := range args[min(1, len(args)):] {
		switch a {
		case "--version", "-version", "-v":
			version = true
		case "--help", "-help", "-h", "help", "h":
			return false
		}
	}
	return version
}

// topicLine names every help topic, wrapped as the rest of pickup's help.
func topicLine() string {
	var b strings.Builder
	b.WriteString("Help topics (pickup help TOPIC; pickup help topics says what each covers):\n  ")
	width := 2
	for i, t := range help.Topics() {
		word := t.Name
		if i > 0 {
			word = ", " + word
		}
		if width+len(word) > 90 {
			b.WriteString(",\n  ")
			word = t.Name
			width = 2
		}
		b.WriteString(word)
		width += len(word)
	}
	return b.String()
}
