// Package pgways tests boards that PostgreSQL arbitrates the ways users run
// them: the real pickup and pickup-postgres binaries, several boards (one
// per machine) on one real PostgreSQL server started for the run, agents
// as executable bash scripts, and the server stopped, restarted and its
// backends terminated mid-drain.
package pgways
