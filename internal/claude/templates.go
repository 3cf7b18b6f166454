package claude

import (
	"embed"
	"io/fs"
	"path"
	"strings"
)

// The plugin directory is the one source of the skills and hooks: Claude
// Code loads it as a plugin (from the marketplace or --plugin-dir), and
// `pickup init --claude` installs the same skills into a repository's
// .claude/ from this embedded copy.
//
//go:embed plugin/skills plugin/hooks/hooks.json
var pluginFS embed.FS

// File is one file to install, by its slash-separated path relative to the
// repository's top directory.
type File struct {
	Path string
	Data []byte
}

// ProjectFiles returns the files `pickup init --claude` installs, in a
// stable order: .claude/skills/handoff/SKILL.md and
// .claude/skills/pickup/SKILL.md.
func ProjectFiles() []File {
	var out []File
	err := fs.WalkDir(pluginFS, "plugin/skills", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := pluginFS.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, File{Path: ".claude/" + strings.TrimPrefix(p, "plugin/"), Data: data})
		return nil
	})
	if err != nil {
		panic("claude: " + err.Error()) // the embedded tree is fixed at build time
	}
	return out
}

// SkillNames returns the names of the skills (the directories under
// skills/), which are also their slash commands.
func SkillNames() []string {
	var names []string
	for _, f := range ProjectFiles() {
		if dir, ok := strings.CutPrefix(path.Dir(f.Path), ".claude/skills/"); ok {
			names = append(names, dir)
		}
	}
	return names
}

// pluginHooks returns the "hooks" object of plugin/hooks/hooks.json: the
// hooks the plugin declares, which `pickup init --claude` merges into the
// settings. Each group there holds one hook.
func pluginHooks() *ojValue {
	data, err := pluginFS.ReadFile("plugin/hooks/hooks.json")
	if err != nil {
		panic("claude: " + err.Error())
	}
	v, err := parseOJ(data)
	if err != nil {
		panic("claude: hooks.json: " + err.Error()) // fixed at build time; a test parses it
	}
	return v.get("hooks")
}

// hookEvents returns the events pickup hooks, in hooks.json's order.
func hookEvents() []string {
	var events []string
	for _, m := range pluginHooks().members {
		events = append(events, m.key)
	}
	return events
}
