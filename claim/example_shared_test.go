package claim_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/cli"
	"github.com/pickup-dev/pickup/sessions"
)

// exampleSharedClones makes a git remote (a bare repository) and two
// clones of it whose boards are shared through it, as `pickup init
// --shared` in each makes them, and returns the two boards' directories.
func exampleSharedClones() (here, there string, cleanup func()) {
	root, err := os.MkdirTemp("", "pickup-example-shared-")
	if err != nil {
		log.Fatal(err)
	}
	git := func(dir string, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			log.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(root, "init", "-q", "--bare", "remote.git")
	var boards []string
	for _, name := range []string{"here", "there"} {
		clone := filepath.Join(root, name)
		git(root, "clone", "-q", filepath.Join(root, "remote.git"), clone)
		git(clone, "config", "user.name", "example")
		git(clone, "config", "user.email", "example@example.com")
		env := cli.OSEnv()
		var out bytes.Buffer
		env.Stdout, env.Stderr = &out, &out
		env.Getwd = func() (string, error) { return clone, nil }
		env.Lifeline, env.GitProxy = nil, nil
		if code := cli.Main(env, []string{"pickup", "init", "--shared"}); code != 0 {
			log.Fatalf("pickup init --shared in %s: exit %d\n%s", clone, code, out.String())
		}
		boards = append(boards, filepath.Join(clone, ".spx", "sessions"))
	}
	return boards[0], boards[1], func() { os.RemoveAll(root) }
}

// A board shared through a git remote (config.yaml says shared: origin):
// claim.New attaches the remote, so a claim is won there, against every
// clone. Here two clones claim one session: the second is told it lost,
// and who won.
func ExampleNew_sharedBoard() {
	here, there, cleanup := exampleSharedClones()
	defer cleanup()

	b1, err := sessions.Open(here)
	if err != nil {
		log.Fatal(err)
	}
	alice, err := claim.New(b1, "alice") // attaches the remote
	if err != nil {
		log.Fatal(err)
	}
	defer alice.Close()
	s, err := b1.Create(sessions.Meta{Title: "Fix the parser"}, nil) // pushed at once
	if err != nil {
		log.Fatal(err)
	}

	b2, err := sessions.Open(there)
	if err != nil {
		log.Fatal(err)
	}
	bob, err := claim.New(b2, "bob")
	if err != nil {
		log.Fatal(err)
	}
	defer bob.Close()
	if _, err := bob.Claim(context.Background(), s.ID); err != nil { // fetches first: the session is there
		log.Fatal(err)
	}
	fmt.Println("bob claimed it in the other clone")

	_, err = alice.Claim(context.Background(), s.ID)
	var e *claim.Error
	if errors.Is(err, claim.ErrSessionNotAvailable) && errors.As(err, &e) {
		fmt.Println("alice lost it to", e.Holder)
	}
	// Output:
	// bob claimed it in the other clone
	// alice lost it to bob
}
