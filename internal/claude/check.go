package claude

import (
	"bytes"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/pickup-dev/pickup/internal/fsx"
)

// Problem is something wrong with an agent's setup in a repository, for
// `pickup doctor`.
type Problem struct {
	Agent   *Agent
	Path    string
	Message string
}

// Check reports what is stale or broken in the setups of the repository at
// top: for each agent whose settings hold pickup's hooks, hooks of another
// pickup (an older `pickup init`), a settings file the agent cannot read,
// or skills and files missing or not pickup's. An agent that was never set
// up is no problem; nothing is changed.
func Check(top string) []Problem {
	var out []Problem
	for _, a := range Agents() {
		if a.Settings == "" {
			continue // opencode: skills only, nothing tells it was set up
		}
		settings := filepath.Join(top, filepath.FromSlash(a.Settings))
		data, err := fsx.ReadRegular(settings)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		fix := "run `pickup init --" + a.Name + "` (or `pickup init --" + a.Name + " --uninstall` to remove pickup's setup)"
		if err != nil {
			out = append(out, Problem{a, settings, "cannot read " + a.Title + "'s settings: " + err.Error()})
			continue
		}
		if !strings.Contains(string(data), hookPrefix) {
			continue // not set up by pickup
		}
		plan, err := planSettings(settings, a.hookTemplate(), true)
		if err != nil {
			out = append(out, Problem{a, settings, "pickup's hooks are in a file " + a.Title + " cannot read: " + err.Error()})
			continue
		}
		if plan.write {
			out = append(out, Problem{a, settings, "pickup's " + a.Title + " hooks here are not the ones this pickup installs (stale, or edited); " + fix})
		}
		for _, f := range a.Files() {
			path := filepath.Join(top, filepath.FromSlash(f.Path))
			have, err := fsx.ReadRegular(path)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				out = append(out, Problem{a, path, "missing: " + a.Title + " has pickup's hooks but not this file; " + fix})
			case err != nil:
				out = append(out, Problem{a, path, err.Error()})
			case !bytes.Equal(have, f.Data) && (a != Claude || priorSkill(have)):
				out = append(out, Problem{a, path, "not the file this pickup installs (stale, or edited); delete it and " + fix})
			}
		}
	}
	return out
}
