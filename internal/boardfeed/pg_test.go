package boardfeed

import (
	"errors"
	"testing"

	"github.com/pickup-dev/pickup/internal/pgboard"
)

// TestDBErrText: the status line says the cause of a database that does
// not answer first (the line may be cut), without pgx's preamble.
func TestDBErrText(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{&pgboard.DatabaseError{URL: "postgres://x@h/db", Op: "read the board", Err: errors.New("failed to connect to `user=x database=db`: 10.0.0.5:5432 (h): dial error: dial tcp 10.0.0.5:5432: connect: connection refused")},
			"dial tcp 10.0.0.5:5432: connect: connection refused"},
		{&pgboard.DatabaseError{URL: "postgres://x@h/db", Op: "wait", Err: errors.New("FATAL: terminating connection due to administrator command (SQLSTATE 57P01)")},
			"FATAL: terminating connection due to administrator command (SQLSTATE 57P01)"},
		{errors.New("postgres board: pickup-postgres not found"), "postgres board: pickup-postgres not found"},
	} {
		if got := dbErrText(tt.err); got != tt.want {
			t.Errorf("dbErrText(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
