// Package agentse2e runs the real Codex CLI and Gemini CLI, set up with
// `pickup init --codex` and `pickup init --gemini`, against scripted
// stand-ins for their model APIs on 127.0.0.1 (see standin_test.go): the
// hooks fire, a session's owner is that agent's session, the skill claims
// and finishes one session, two agents at once never share one, the board
// files are out of reach, and a killed agent's claim comes back at once.
// The MCP setup lines of `pickup help mcp` for Codex CLI, Gemini CLI and
// Cursor are taken from the help text, written where each agent reads
// them, loaded by the real CLI (codex mcp list, gemini mcp list) or parsed
// (Cursor), and the command they name answers initialize and tools/list
// (mcpsetup_test.go).
//
// The CLIs are the npm packages @openai/codex and @google/gemini-cli at the
// versions scripts/install-agent-clis pins (scripts/test installs them into a
// cache folder and sets $PICKUP_CODEX_BIN and $PICKUP_GEMINI_BIN). A
// missing CLI fails the tests; PICKUP_SKIP_CODEX_E2E=1 and
// PICKUP_SKIP_GEMINI_E2E=1 skip them on purpose.
package agentse2e
