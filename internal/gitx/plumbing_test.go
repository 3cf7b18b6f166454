package gitx

import (
	"context"
	"errors"
	"testing"
)

func TestPushRejected(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stderr string
		want   bool
	}{
		{"someone pushed first", " ! [rejected]        abc -> pickup (fetch first)\nerror: failed to push some refs to 'x'\n", true},
		{"not a fast-forward", " ! [rejected]        abc -> pickup (non-fast-forward)\n", true},
		{"ref locked by a racing push", " ! [remote rejected] abc -> pickup (failed to update ref)\n", true},
		{"hook", " ! [remote rejected] abc -> pickup (pre-receive hook declined)\n", false},
		{"protected", "remote: error: GH006: Protected branch update failed for refs/heads/pickup.\n ! [remote rejected] pickup -> pickup (protected branch hook declined)\n", false},
		{"unreachable", "fatal: unable to connect to 127.0.0.1:\n127.0.0.1[0: 127.0.0.1]: errno=Connection refused\n", false},
		{"permission", "fatal: remote error: access denied or repository not exported: /board.git\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := &Error{Args: []string{"push"}, Code: 1, Stderr: tc.stderr}
			if got := PushRejected(err); got != tc.want {
				t.Fatalf("PushRejected = %v, want %v", got, tc.want)
			}
		})
	}
	if PushRejected(errors.New("plain")) {
		t.Fatal("PushRejected of a non-git error = true")
	}
}

func TestCatBlobs(t *testing.T) {
	gitEnv(t)
	r := newRepo(t)
	ctx := context.Background()
	a, err := r.RunIn(ctx, []byte("one\ntwo\n"), nil, "hash-object", "-w", "--stdin")
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.RunIn(ctx, []byte(""), nil, "hash-object", "-w", "--stdin")
	if err != nil {
		t.Fatal(err)
	}
	a, b = a[:len(a)-1], b[:len(b)-1]
	got, err := r.CatBlobs(ctx, a, b, "0000000000000000000000000000000000000001")
	if err != nil {
		t.Fatal(err)
	}
	if string(got[a]) != "one\ntwo\n" || string(got[b]) != "" || len(got) != 2 {
		t.Fatalf("CatBlobs = %q", got)
	}
}
