// Package templates holds the AGENTS.md snippet that `pickup init --agents`
// prints, embedded in the binary so that an installed pickup needs nothing
// beside itself. (The Claude Code files are internal/claude's.)
package templates

import _ "embed"

//go:embed agents.md
var agents string

// Agents returns the AGENTS.md snippet: the board protocol for agents
// other than Claude Code (Codex and others), ending with a newline.
func Agents() string { return agents }
