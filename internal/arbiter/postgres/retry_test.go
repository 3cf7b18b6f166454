package postgres

import (
	"errors"
	"testing"
	"time"
)

// TestTransient: only what did not happen is tried again: not an answer,
// not a commit whose outcome is unknown, not the history pusher's turn.
func TestTransient(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{&DatabaseError{Err: errors.New("refused"), transient: true}, true},
		{&DatabaseError{Err: errors.New("password authentication failed")}, false},
		{&DatabaseError{Err: errors.New("lost during the commit"), Unknown: true, transient: true}, false},
		{errors.New("not a database error"), false},
	}
	for _, c := range cases {
		if got, _ := transient(c.err, nil); got != c.want {
			t.Errorf("transient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	for _, op := range []string{"history_begin", "history_batch", "history_mark", "history_end", "wait"} {
		if retryable[op] {
			t.Errorf("%s is retried: its state lives on one connection", op)
		}
	}
	if !retryable["move"] || !retryable["state"] || !retryable["open"] {
		t.Errorf("move, state and open must be retried")
	}
	if (retryPolicy{}).limit() != DefaultNetworkTimeout || (retryPolicy{deadline: 10 * time.Second}).limit() != 10*time.Second {
		t.Errorf("the deadline is not network_timeout")
	}
}
