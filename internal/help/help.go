// Package help holds pickup's documentation topics, `pickup help TOPIC`.
//
// Each topic is a markdown file, topics/<name>.md, embedded in the binary
// and read as it is on a code host: pickup prints it as written, with no
// rendering (a markdown library would cost every pickup process its init,
// and Claude Code's hooks start one at every tool call). A topic's first
// line is its title, "# Title", which `pickup help topics` prints beside
// its name; README.md links to each file.
//
// To add a topic, add topics/<name>.md starting with "# Title", a row for
// it in README.md's table of topics, and nothing else: the list is the
// directory (TestTopicFiles checks the rest, and that no topic is named
// like a command).
package help

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

//go:embed topics/*.md
var files embed.FS

// Topic is one help topic.
type Topic struct {
	Name  string // what `pickup help NAME` takes: the file name without .md
	Title string // the file's first line, without its "# "
}

// Topics lists the topics by name.
func Topics() []Topic {
	entries, err := fs.ReadDir(files, "topics")
	if err != nil {
		panic(err) // embedded: cannot fail
	}
	var out []Topic
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".md")
		if !ok {
			continue
		}
		text, _ := Text(name)
		out = append(out, Topic{Name: name, Title: title(text)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Text returns the markdown of the topic name, and whether there is one.
func Text(name string) (string, bool) {
	if name == "" || strings.ContainsAny(name, "/\\") || strings.HasPrefix(name, ".") {
		return "", false
	}
	b, err := files.ReadFile(path.Join("topics", name+".md"))
	if err != nil {
		return "", false
	}
	return string(b), true
}

// title is a topic's first line without its "# ".
func title(text string) string {
	first, _, _ := strings.Cut(text, "\n")
	return strings.TrimSpace(strings.TrimPrefix(first, "# "))
}

// List is what `pickup help topics` prints: a line per topic.
func List() string {
	var b strings.Builder
	b.WriteString("Help topics (pickup help TOPIC prints one):\n\n")
	width := 0
	topics := Topics()
	for _, t := range topics {
		width = max(width, len(t.Name))
	}
	for _, t := range topics {
		fmt.Fprintf(&b, "   %-*s  %s\n", width, t.Name, t.Title)
	}
	b.WriteString("\nEach is also a markdown file in pickup's repository: internal/help/topics/TOPIC.md.\n")
	return b.String()
}

// ExitCode is one row of the exit-codes topic's table.
type ExitCode struct {
	Code    int
	Meaning string // the short meaning, as `pickup help` lists it
	Details string // when it happens
}

// ExitCodes reads the table of the exit-codes topic, the one place where
// pickup's exit codes are documented: `pickup help` lists them from it.
// A row is "| CODE | MEANING | DETAILS |".
func ExitCodes() []ExitCode {
	text, _ := Text("exit-codes")
	var out []ExitCode
	for _, line := range strings.Split(text, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 || cells[0] != "" || strings.TrimSpace(cells[4]) != "" {
			continue
		}
		code, err := strconv.Atoi(strings.TrimSpace(cells[1]))
		if err != nil {
			continue // the header and its rule
		}
		out = append(out, ExitCode{
			Code:    code,
			Meaning: strings.TrimSpace(cells[2]),
			Details: strings.TrimSpace(cells[3]),
		})
	}
	return out
}

// ExitCodeList is the EXIT CODES section of `pickup help`, made from the
// exit-codes topic: a line per code, its short meaning in plain text.
func ExitCodeList() string {
	var b strings.Builder
	b.WriteString("EXIT CODES (pickup help exit-codes says when each one happens):\n")
	for _, c := range ExitCodes() {
		fmt.Fprintf(&b, "   %-3d  %s\n", c.Code, plain(c.Meaning))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// plain drops markdown's code quotes from a table cell.
func plain(s string) string { return strings.ReplaceAll(s, "`", "") }
