package gitx

import (
	"errors"
	"strings"
)

// refusals are how git, its remote helpers, ssh and pickup's git:// relay
// say that a remote refused the connection: nothing reached it.
var refusals = []string{
	"Connection refused",         // git://, ssh, curl
	"connection refused",         // pickup's relay (Go's net errors)
	"Couldn't connect to server", // curl
}

// NotConnected reports whether err is a git command that could not
// connect to its remote at all (refused): safe to run again, whatever it
// was, since the remote saw nothing. A reset or a timeout is not: a push
// may have landed before it.
func NotConnected(err error) bool {
	var e *Error
	if !errors.As(err, &e) || errors.Is(err, ErrNetTimeout) || e.Code <= 0 {
		return false
	}
	for _, s := range refusals {
		if strings.Contains(e.Stderr, s) {
			return true
		}
	}
	return false
}
