// Package claudee2e runs the real Claude Code CLI against pickup's Claude
// Code integration, with no model and no login: each test starts a small
// stand-in for the Anthropic Messages API on 127.0.0.1 (ANTHROPIC_BASE_URL)
// that answers the CLI's requests with scripted steps — a Bash tool call, an
// Edit, a final text — and records what the CLI sent back (the tool results
// with their exit codes). The tests then look at the board: who claimed
// what, what SIGTERM and kill -9 leave behind, what a resumed or forked
// session may take, what the Bash sandbox changes, and that the agent cannot
// edit board files.
//
// The CLI is the npm package @anthropic-ai/claude-code at the version
// scripts/test pins; scripts/test installs it into a cache folder and names
// the executable in $PICKUP_CLAUDE_BIN. Without it the tests fail, unless
// PICKUP_SKIP_CLAUDE_E2E=1 says to skip them on purpose.
//
// To see what happened: PICKUP_E2E_DUMP=DIR writes every request the CLI
// sends to the stand-in, PICKUP_E2E_DEBUG=DIR each CLI's --debug-file log.
// A failing test prints the stand-in's request log and everything the CLI
// printed (hook events included).
//
// The package has no code of its own; everything lives in *_test.go.
package claudee2e
