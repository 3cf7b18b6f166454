package claude

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pickup-dev/pickup/sessions"
)

// PreToolUse: board files are out of the agent's reach, and the pickup
// commands an agent needs run without asking.
//
// Agents told that a claim or lock is held have edited or deleted board
// files to "fix" it; prose forbidding it is not enough. So Edit, Write,
// MultiEdit and NotebookEdit of a file under the board, or under any
// .pickup/ directory, or under .git/pickup/, or a hard link to a board
// file, whatever case the tool's name comes in, are denied with the
// command to use instead. And a Bash command that is exactly one simple
// `pickup SUBCOMMAND ...` of the agent's own (next, claim, done, ...) on
// the repository's own board (see safeCommand) is allowed, so that it does not
// depend on a skill's allowed-tools being in effect (after --resume,
// /clear, or when the SessionStart text says to finish a session).
//
// The hook reads its input and at most a few stats (the board's path, and
// the real path of the file edited): no /proc walk, no board listing.

// preToolInput is what the PreToolUse hook reads of its input.
type preToolInput struct {
	SessionID string `json:"session_id"`
	Cwd       string `json:"cwd"`
	ToolName  string `json:"tool_name"`
	ToolInput struct {
		FilePath     string          `json:"file_path"`
		NotebookPath string          `json:"notebook_path"`
		Command      json.RawMessage `json:"command"` // a string; Codex: maybe a list of words
		Path         string          `json:"path"`
		Patch        string          `json:"patch"`
		Input        string          `json:"input"`
	} `json:"tool_input"`
}

// preToolUse decides a tool call, printing the decision; no output leaves
// it to Claude Code's own rules.
func (h *Hooks) preToolUse(stdin io.Reader) error {
	// The whole input: a Write's content may be large, and the path
	// must not be lost by cutting it.
	data, err := io.ReadAll(stdin)
	if err != nil {
		return fmt.Errorf("read input: %w", err)
	}
	var in preToolInput
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("read input: %w", err)
	}
	decision, reason := "", ""
	a := h.agent()
	// The agent's tool names, whatever case it passes them in.
	tool := strings.ToLower(in.ToolName)
	command := commandText(in.ToolInput.Command)
	switch {
	case slices.Contains(a.shellTools, tool):
		if c, ok := agentCommand(command); ok && a.allows && h.safeCommand(c, in.Cwd) {
			decision = "allow"
			reason = "`pickup " + c.name + "` on this repository's board is one of the commands pickup's agents run (allowed by pickup's PreToolUse hook)"
		}
		if patch := command; a != Claude && strings.Contains(patch, "*** Begin Patch") {
			// Codex CLI may run apply_patch as a shell command.
			decision, reason = h.judgePaths(in.ToolName, patchPaths(patch), in.Cwd)
		}
	case slices.Contains(a.editTools, tool):
		var paths []string
		for _, p := range []string{in.ToolInput.FilePath, in.ToolInput.NotebookPath, in.ToolInput.Path} {
			if p != "" {
				paths = append(paths, p)
			}
		}
		for _, patch := range []string{in.ToolInput.Patch, in.ToolInput.Input, command} {
			paths = append(paths, patchPaths(patch)...)
		}
		decision, reason = h.judgePaths(in.ToolName, paths, in.Cwd)
	}
	if decision == "" {
		return nil
	}
	_, err = h.Stdout.Write(a.decisionOutput(decision, reason))
	return err
}

// judgePaths denies a tool that writes any of paths on the board.
func (h *Hooks) judgePaths(tool string, paths []string, cwd string) (decision, reason string) {
	for _, path := range paths {
		if d, r := h.judgePath(tool, path, cwd); d != "" {
			return d, r
		}
	}
	return "", ""
}

// judgePath denies a tool that writes path, if it is on the board.
func (h *Hooks) judgePath(tool, path, cwd string) (decision, reason string) {
	if !filepath.IsAbs(cwd) {
		cwd = ""
	}
	if !filepath.IsAbs(path) {
		base := cwd
		if base == "" && h.Getwd != nil {
			base, _ = h.Getwd() // the agents send cwd; without it, ours is the session's
		}
		if !filepath.IsAbs(base) {
			return "", ""
		}
		path = filepath.Join(base, path)
	}
	board, err := h.BoardDir(cwd)
	if err != nil {
		board = ""
	} else if board, err = filepath.Abs(board); err != nil {
		board = ""
	}
	if onBoard(path, board) || linkedToBoard(path, board, h.repoTop(cwd)) {
		return "deny", boardFileReason(tool, path, board)
	}
	return "", ""
}

// decisionOutput is the JSON a PreToolUse hook prints to decide, in the
// form the agent reads: Gemini CLI's BeforeTool takes a top-level
// decision, Claude Code and Codex CLI a hookSpecificOutput.
func (a *Agent) decisionOutput(decision, reason string) []byte {
	if a == Gemini {
		b := []byte(`{"decision":`)
		b = appendJSONString(b, decision)
		b = append(b, `,"reason":`...)
		b = appendJSONString(b, reason)
		return append(b, "}\n"...)
	}
	return decisionJSON(decision, reason)
}

// commandText is a tool input's command: a string, or (Codex CLI) a list
// of words, joined by spaces.
func commandText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var words []string
	if json.Unmarshal(raw, &words) == nil {
		return strings.Join(words, " ")
	}
	return ""
}

// patchPaths returns the files an apply_patch patch (Codex CLI) adds,
// updates, deletes or moves to.
func patchPaths(patch string) []string {
	var out []string
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimSpace(line)
		for _, p := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if rest, ok := strings.CutPrefix(line, p); ok && strings.TrimSpace(rest) != "" {
				out = append(out, strings.TrimSpace(rest))
			}
		}
	}
	return out
}

// decisionJSON is the JSON a PreToolUse hook prints to decide, byte for
// byte what json.Encoder writes for it (TestDecisionJSON), built without
// reflection: encoding/json's first use of a struct type, in every hook
// process, inspects its fields and builds an encoder for it.
func decisionJSON(decision, reason string) []byte {
	b := make([]byte, 0, 128+len(reason))
	b = append(b, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":`...)
	b = appendJSONString(b, decision)
	b = append(b, `,"permissionDecisionReason":`...)
	b = appendJSONString(b, reason)
	return append(b, "}}\n"...)
}

// appendJSONString appends s as a JSON string, escaped as json.Marshal
// escapes it (HTML characters included).
func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

// onBoard reports whether path is the board, under it, or under a .pickup
// directory anywhere; compared as written and, if not, with links
// resolved (a board reached through a link is the same board).
func onBoard(path, board string) bool {
	path = filepath.Clean(path)
	if under(path, board) || hasPickupDir(path) {
		return true
	}
	realPath := resolveExisting(path)
	if realPath != path && (under(realPath, board) || hasPickupDir(realPath)) {
		return true
	}
	if board == "" {
		return false
	}
	realBoard, err := filepath.EvalSymlinks(board)
	return err == nil && (under(path, realBoard) || under(realPath, realBoard))
}

func under(path, dir string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// hasPickupDir reports whether path is under a .pickup directory, or
// under .git/pickup (where a shared board keeps its queue and state).
func hasPickupDir(path string) bool {
	parts := strings.Split(filepath.ToSlash(path), "/")
	for i, part := range parts {
		if part == sessions.RuntimeDirName || (part == ".git" && i+1 < len(parts) && parts[i+1] == "pickup") {
			return true
		}
	}
	return false
}

// resolveExisting resolves the links in the longest existing prefix of
// path (a file to be written may not exist yet).
func resolveExisting(path string) string {
	rest := ""
	p := path
	// One lstat per missing name before the first that exists: resolving
	// links in a path that does not exist fails anyway, after an lstat of
	// every name in it.
	for _, err := os.Lstat(p); err != nil && filepath.Dir(p) != p; _, err = os.Lstat(p) {
		rest = filepath.Join(filepath.Base(p), rest)
		p = filepath.Dir(p)
	}
	for ; ; p = filepath.Dir(p) {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		if filepath.Dir(p) == p {
			return path
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

func boardFileReason(tool, path, board string) string {
	where := "a pickup board's runtime directory (.pickup/)"
	if board != "" && under(path, board) {
		where = "the pickup board " + board
	}
	return fmt.Sprintf("%s of %s is refused: it is on %s. A session's place on the board is its state and its owner, "+
		"and only the pickup command moves it, atomically; never edit, write, move or delete board files, lease or lock files. "+
		"Use pickup instead: `pickup done ID` finishes a session you hold, `pickup release ID` gives it back, "+
		"`pickup new --title T -` writes a new one (a handoff: /handoff), `pickup show ID` prints one. "+
		"If a session or lock is held by someone else, take other work: never force it.", tool, path, where)
}
