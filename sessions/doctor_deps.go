package sessions

import (
	"fmt"
	"os"
	"strings"
)

// checkDependencies reports what makes a session wait forever, which next
// cannot tell from a session that waits for work in progress: a dependency
// that no state of the board holds, and a cycle of depends_on (each cycle
// once, at its first id). Only sessions not done count: a finished one
// waits on nothing. Each finding is at the session's depends_on line.
func (b *Board) checkDependencies() ([]Finding, error) {
	list, err := b.List(Todo, Doing, Failed)
	if err != nil {
		return nil, err
	}
	d := b.Deps(list)
	path := make(map[string]string, len(list))
	for _, s := range list {
		if _, dup := path[s.ID]; !dup {
			path[s.ID] = s.Path
		}
	}
	var out []Finding
	cycles := map[string]bool{}
	for _, s := range list {
		if path[s.ID] != s.Path {
			continue // a second copy: reported as a duplicate
		}
		w := d.Wait(s)
		if len(w.Missing) > 0 {
			missing := strings.Join(w.Missing, ", ")
			out = append(out, Finding{Kind: "dependency", ID: s.ID, Path: s.Path, Line: dependsLine(s.Path),
				Message: fmt.Sprintf("depends on %s, which no state of the board holds, so next never takes it: remove %s from its depends_on, or take it anyway (claim it by its id)",
					missing, missing)})
		}
		if len(w.Cycle) > 0 && !cycles[w.Cycle[0]] {
			cycles[w.Cycle[0]] = true
			at := path[w.Cycle[0]]
			out = append(out, Finding{Kind: "cycle", ID: w.Cycle[0], Path: at, Line: dependsLine(at),
				Message: fmt.Sprintf("dependency cycle %s, so next never takes any of them: remove one of these depends_on, or take one anyway (claim it by its id)", CycleText(w.Cycle))})
		}
	}
	return out, nil
}

// dependsLine is the line of the depends_on key in the session file at
// path, or 0 if it cannot be read.
func dependsLine(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	head, _, err := readHead(f)
	if err != nil {
		return 0
	}
	return keyLine(head, "depends_on")
}
