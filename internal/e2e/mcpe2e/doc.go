// Package mcpe2e drives `pickup mcp` on shared boards the way an agent's
// MCP configuration starts it: the real pickup binary (which hands over to
// the real pickup-mcp) over stdio, with the MCP Go SDK's own client, in one
// clone of a board shared through a git remote (two clones of one bare
// repository served by `git daemon` on 127.0.0.1) or through PostgreSQL (a
// private server, internal/privatepg), while the real `pickup` command
// works the other clone.
//
// What it proves: an MCP agent and a command-line agent racing for the same
// sessions, round after round, win each exactly once, and the loser is told
// so in a normal answer with nothing moved for it; an MCP agent and a
// command-line agent drain a board together, every session finished once;
// an MCP agent killed with SIGKILL while it holds a session gives it back
// to the next `next` at once, and a live one's claim is never taken.
//
// Bounds catch hangs only, counted from the last progress
// (internal/testbound); no assertion depends on the machine's speed.
package mcpe2e
