package cli

import (
	"strings"

	"github.com/pickup-dev/pickup/sessions"
)

// doctorWording says sessions' doctor findings in the command line's
// terms. Package sessions words what to do for any caller ("claim it by its
// id", "a repair"); pickup doctor names the commands and exit codes that do
// it. Each entry replaces one phrase of sessions' wording, in the findings
// of one kind; {id} stands for the finding's session id.
var doctorWording = []struct {
	kind, field, lib, cli string
}{
	{"dependency", "message", "or take it anyway (claim it by its id)", "or take it anyway with `pickup claim {id}`"},
	{"cycle", "message", "or take one anyway (claim it by its id)", "or take one anyway with `pickup claim ID`"},
	{"duplicate", "message", ": a repair moves nothing; the owner who gives it up releases it, then a repair keeps the other's claim",
		": --fix moves nothing; the owner who gives it up runs `pickup --owner OWNER release {id}`, then `pickup doctor --fix` keeps the other's claim"},
	{"duplicate", "message", "; a repair keeps that one: ", "; --fix keeps that one: "},
	{"duplicate", "message", " here is fenced (finishing it fails: claim lost)", " here is fenced (its done exits 6)"},
	{"duplicate", "fix", ": finishing {id} now fails (claim lost)", ": its `pickup done {id}` now exits 6 (claim lost)"},
	{"", "message", "; the repair moved nothing: ", "; --fix moved nothing: "},
}

// inCLITerms returns fs with doctorWording applied.
func inCLITerms(fs []sessions.Finding) []sessions.Finding {
	for i := range fs {
		f := &fs[i]
		for _, w := range doctorWording {
			if w.kind != "" && w.kind != f.Kind {
				continue
			}
			lib := strings.ReplaceAll(w.lib, "{id}", f.ID)
			cli := strings.ReplaceAll(w.cli, "{id}", f.ID)
			switch w.field {
			case "message":
				f.Message = strings.Replace(f.Message, lib, cli, 1)
			case "fix":
				f.Fix = strings.Replace(f.Fix, lib, cli, 1)
			}
		}
	}
	return fs
}
