package claude

import (
	"os"
	"testing"

	"github.com/pickup-dev/pickup/internal/proc"
)

func TestParseHookInput(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Input
		wantErr bool
	}{
		{in: `{"session_id":"s1","cwd":"/r","tool_input":{"a":[1,2]}}`, want: Input{SessionID: "s1", Cwd: "/r"}},
		{in: `{"tool_input":{"session_id":"fake"},"cwd":"/r","session_id":"s2"}`, want: Input{SessionID: "s2", Cwd: "/r"}},
		{in: `{"session_id":"s3"}`, want: Input{SessionID: "s3"}},
		{in: `{"cwd":"/r"}`, wantErr: true},
		{in: `[]`, wantErr: true},
		{in: ``, wantErr: true},
		{in: `{"session_id":`, wantErr: true},
		{in: `{"session_id":"s4","tool_response":{"content":"cut here`, want: Input{SessionID: "s4"}},
	} {
		got, err := ParseInput([]byte(tc.in))
		if (err != nil) != tc.wantErr || (!tc.wantErr && got != tc.want) {
			t.Errorf("ParseInput(%s) = %+v, %v; want %+v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

// OwnerOf trusts a record only for the very process it names.
func TestOwnerOfNeedsTheSameProcess(t *testing.T) {
	f := newFixture(t)
	f.mustHook("session-start", sessA, nil)
	if owner, ok := f.owner(); !ok || owner != sessA {
		t.Fatalf("OwnerOf = %q, %v; want %s", owner, ok, sessA)
	}
	// A record of an earlier process that had this pid.
	path := PidPath(f.board.Dir, f.claude.Process.Pid)
	rec, _ := ReadRecord(path)
	rec.Process.Start++
	if err := WritePid(f.board.Dir, rec); err != nil {
		t.Fatal(err)
	}
	if owner, ok := f.owner(); ok {
		t.Errorf("OwnerOf trusted a record of another process: %q", owner)
	}
	// No record at all.
	if owner, ok := OwnerOf(f.board.Dir, proc.Env{Hostname: os.Hostname}.Self()); ok {
		t.Errorf("OwnerOf without a record = %q", owner)
	}
}
