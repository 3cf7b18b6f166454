// Package templates holds the files that `pickup init --claude` installs
// into a repository's .claude/ directory, and the AGENTS.md snippet that
// `pickup init --agents` prints. They are embedded in the binary, so an
// installed pickup needs nothing beside itself.
package templates

import (
	"embed"
	"io/fs"
	"path"
	"strings"
)

//go:embed claude agents.md
var files embed.FS

// File is one file to install, by its slash-separated path relative to the
// repository's top directory.
type File struct {
	Path string
	Data []byte
}

// Claude returns the files of the Claude Code integration, in a stable
// order: .claude/skills/handoff/SKILL.md and .claude/skills/pickup/SKILL.md.
func Claude() []File {
	var out []File
	// The embedded tree is claude/...; go:embed leaves out names that
	// start with a dot, so ".claude" is added here.
	err := fs.WalkDir(files, "claude", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, File{Path: "." + p, Data: data})
		return nil
	})
	if err != nil {
		panic("templates: " + err.Error()) // the embedded tree is fixed at build time
	}
	return out
}

// SkillNames returns the names of the skills Claude installs (the
// directories under .claude/skills/), which are also their slash commands.
func SkillNames() []string {
	var names []string
	for _, f := range Claude() {
		if dir, ok := strings.CutPrefix(path.Dir(f.Path), ".claude/skills/"); ok {
			names = append(names, dir)
		}
	}
	return names
}

// Agents returns the AGENTS.md snippet: the board protocol for agents
// other than Claude Code (Codex and others), ending with a newline.
func Agents() string {
	data, err := files.ReadFile("agents.md")
	if err != nil {
		panic("templates: " + err.Error())
	}
	return string(data)
}
