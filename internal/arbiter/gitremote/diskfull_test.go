package gitremote

import (
	"errors"
	"strings"
	"testing"

	"github.com/pickup-dev/pickup/internal/gitx"
)

// A git command that failed writing a local file is reported as a local
// failure even when the disk has room again by the time pickup looks: its
// hint must not send the user to check the network or credentials.
func TestRemoteErrorHintLocalWrite(t *testing.T) {
	for _, tc := range []struct {
		name, stderr string
		local        bool
	}{
		{"ref lock", "error: cannot update ref 'refs/pickup/fetched': couldn't write '.git/refs/pickup/fetched.lock'", true},
		{"lock create", "fatal: Unable to create '/c/.git/index.lock': No such file or directory", true},
		{"object", "error: unable to write file .git/objects/ab/cdef", true},
		{"network", "fatal: unable to access 'https://example.invalid/': Could not resolve host", false},
		{"refused", " ! [rejected]        pickup -> pickup (fetch first)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &RemoteError{Op: "fetch", Remote: "origin", Branch: "pickup",
				Err: &gitx.Error{Args: []string{"fetch"}, Code: 1, Stderr: tc.stderr, Err: errors.New("exit status 1")}}
			h := e.Hint()
			if got := !strings.Contains(h, "credentials"); got != tc.local {
				t.Errorf("hint for %q: %s", tc.stderr, h)
			}
		})
	}
}
