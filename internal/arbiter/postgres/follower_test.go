package postgres

import (
	"errors"
	"testing"
)

// TestFollowerSay: a live board's status line says the cause of a database that does
// not answer first (the line may be cut), without pgx's preamble.
func TestFollowerSay(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{&DatabaseError{URL: "postgres://x@h/db", Op: "read the board", Err: errors.New("failed to connect to `user=x database=db`: 10.0.0.5:5432 (h): dial error: dial tcp 10.0.0.5:5432: connect: connection refused")},
			"dial tcp 10.0.0.5:5432: connect: connection refused"},
		{&DatabaseError{URL: "postgres://x@h/db", Op: "wait", Err: errors.New("FATAL: terminating connection due to administrator command (SQLSTATE 57P01)")},
			"FATAL: terminating connection due to administrator command (SQLSTATE 57P01)"},
		{errors.New("postgres board: pickup-postgres not found"), "postgres board: pickup-postgres not found"},
	} {
		if got := (&Follower{}).Say(tt.err); got != tt.want {
			t.Errorf("Say(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
