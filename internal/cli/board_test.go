package cli

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pickup-dev/pickup/sessions"
)

// wtFile writes content at root/rel, creating directories.
func wtFile(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func wtDir(t *testing.T, root, rel string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(rel)), 0o755); err != nil {
		t.Fatal(err)
	}
}

// wtRoot returns a temporary directory with no git repository above it,
// skipping the test if one encloses the temporary directory.
func wtRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			t.Skipf("the temporary directory is inside a git repository at %s", d)
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return root
}

// wtRepo makes a fake main repository at root/rel with a linked worktree
// registered as name: <main>/.git/worktrees/<name>/commondir says "../..".
func wtRepo(t *testing.T, root, rel string, worktrees ...string) {
	t.Helper()
	wtFile(t, root, rel+"/.git/HEAD", "ref: refs/heads/main\n")
	for _, name := range worktrees {
		wtFile(t, root, rel+"/.git/worktrees/"+name+"/commondir", "../..\n")
		wtFile(t, root, rel+"/.git/worktrees/"+name+"/HEAD", "ref: refs/heads/"+name+"\n")
	}
}

func TestMainWorktree(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(t *testing.T, root string)
		dir    string // where to start, relative to root
		want   string // relative to root; "" for no repository
		wantOK bool
	}{
		{
			name:  "plain repository",
			setup: func(t *testing.T, root string) { wtRepo(t, root, "repo") },
			dir:   "repo", want: "repo", wantOK: true,
		},
		{
			name: "nested subdirectory",
			setup: func(t *testing.T, root string) {
				wtRepo(t, root, "repo")
				wtDir(t, root, "repo/a/b/c")
			},
			dir: "repo/a/b/c", want: "repo", wantOK: true,
		},
		{
			name: "innermost repository wins",
			setup: func(t *testing.T, root string) {
				wtRepo(t, root, "outer")
				wtRepo(t, root, "outer/vendor/inner")
				wtDir(t, root, "outer/vendor/inner/pkg")
			},
			dir: "outer/vendor/inner/pkg", want: "outer/vendor/inner", wantOK: true,
		},
		{
			name: "linked worktree, absolute gitdir",
			setup: func(t *testing.T, root string) {
				wtRepo(t, root, "main", "wt")
				wtFile(t, root, "wt/.git", "gitdir: "+filepath.Join(root, "main/.git/worktrees/wt")+"\n")
			},
			dir: "wt", want: "main", wantOK: true,
		},
		{
			name: "linked worktree, from a subdirectory",
			setup: func(t *testing.T, root string) {
				wtRepo(t, root, "main", "wt")
				wtFile(t, root, "wt/.git", "gitdir: "+filepath.Join(root, "main/.git/worktrees/wt")+"\n")
				wtDir(t, root, "wt/src/deep")
			},
			dir: "wt/src/deep", want: "main", wantOK: true,
		},
		{
			name: "linked worktree, relative gitdir",
			setup: func(t *testing.T, root string) {
				wtRepo(t, root, "main", "wt")
				wtFile(t, root, "wts/wt/.git", "gitdir: ../../main/.git/worktrees/wt\n")
				wtDir(t, root, "wts/wt/sub")
			},
			dir: "wts/wt/sub", want: "main", wantOK: true,
		},
		{
			name: "linked worktree inside the main work tree",
			setup: func(t *testing.T, root string) {
				wtRepo(t, root, "main", "wt")
				wtFile(t, root, "main/.worktrees/wt/.git", "gitdir: ../../.git/worktrees/wt\n")
			},
			dir: "main/.worktrees/wt", want: "main", wantOK: true,
		},
		{
			name: "absolute commondir",
			setup: func(t *testing.T, root string) {
				wtRepo(t, root, "main")
				wtFile(t, root, "main/.git/worktrees/wt/commondir", filepath.Join(root, "main/.git")+"\n")
				wtFile(t, root, "wt/.git", "gitdir: "+filepath.Join(root, "main/.git/worktrees/wt")+"\n")
			},
			dir: "wt", want: "main", wantOK: true,
		},
		{
			name: "CRLF and spaces in the .git file",
			setup: func(t *testing.T, root string) {
				wtRepo(t, root, "main", "wt")
				wtFile(t, root, "wt/.git", "gitdir:   "+filepath.Join(root, "main/.git/worktrees/wt")+"  \r\n")
			},
			dir: "wt", want: "main", wantOK: true,
		},
		{
			name: "submodule: its own top",
			setup: func(t *testing.T, root string) {
				wtRepo(t, root, "super")
				wtFile(t, root, "super/.git/modules/sub/HEAD", "ref: refs/heads/main\n")
				wtFile(t, root, "super/sub/.git", "gitdir: ../.git/modules/sub\n")
			},
			dir: "super/sub", want: "super/sub", wantOK: true,
		},
		{
			name: "worktree of a bare repository: the worktree",
			setup: func(t *testing.T, root string) {
				wtFile(t, root, "repo.git/HEAD", "ref: refs/heads/main\n")
				wtFile(t, root, "repo.git/worktrees/wt/commondir", "../..\n")
				wtFile(t, root, "wt/.git", "gitdir: ../repo.git/worktrees/wt\n")
			},
			dir: "wt", want: "wt", wantOK: true,
		},
		{
			name:  "no repository",
			setup: func(t *testing.T, root string) { wtDir(t, root, "a/b") },
			dir:   "a/b", wantOK: false,
		},
		{
			name: "a .git file that is not a gitdir",
			setup: func(t *testing.T, root string) {
				wtFile(t, root, "x/.git", "not a gitdir line\n")
			},
			dir: "x", wantOK: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := wtRoot(t)
			tt.setup(t, root)
			got, ok := mainWorktree(filepath.Join(root, filepath.FromSlash(tt.dir)))
			if ok != tt.wantOK {
				t.Fatalf("mainWorktree(%s) = %q, %v; want ok %v", tt.dir, got, ok, tt.wantOK)
			}
			if !ok {
				return
			}
			if want := filepath.Join(root, filepath.FromSlash(tt.want)); got != want {
				t.Errorf("mainWorktree(%s) = %q, want %q", tt.dir, got, want)
			}
		})
	}
}

// wtEnv is an Env with a fixed environment and working directory.
func wtEnv(vars map[string]string, wd string, host string, hostErr error) *Env {
	return &Env{
		Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard,
		Getenv: func(k string) string { return vars[k] },
		Getwd: func() (string, error) {
			if wd == "" {
				return "", errors.New("getwd failed")
			}
			return wd, nil
		},
		Hostname: func() (string, error) { return host, hostErr },
	}
}

func TestBoardDir(t *testing.T) {
	root := wtRoot(t)
	wtRepo(t, root, "main", "wt")
	wtFile(t, root, "wt/.git", "gitdir: ../main/.git/worktrees/wt\n")
	wtDir(t, root, "main/sub")
	wtDir(t, root, "plain/sub")
	in := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }

	tests := []struct {
		name    string
		flag    string // --dir
		vars    map[string]string
		wd      string // "" makes Getwd fail
		want    string
		wantErr bool
	}{
		{name: "--dir wins over everything", flag: "/from/flag", vars: map[string]string{"PICKUP_DIR": "/from/env"}, wd: in("main/sub"), want: "/from/flag"},
		{name: "--dir without a working directory", flag: "rel/flag", wd: "", want: "rel/flag"},
		{name: "PICKUP_DIR over git", vars: map[string]string{"PICKUP_DIR": "/from/env"}, wd: in("main/sub"), want: "/from/env"},
		{name: "PICKUP_DIR without a working directory", vars: map[string]string{"PICKUP_DIR": "/from/env"}, wd: "", want: "/from/env"},
		{name: "git main work tree", wd: in("main/sub"), want: in("main/.spx/sessions")},
		{name: "git linked worktree shares the main board", wd: in("wt"), want: in("main/.spx/sessions")},
		{name: "no repository: the working directory", wd: in("plain/sub"), want: in("plain/sub/.spx/sessions")},
		{name: "empty PICKUP_DIR is unset", vars: map[string]string{"PICKUP_DIR": ""}, wd: in("plain"), want: in("plain/.spx/sessions")},
		{name: "no working directory", wd: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &run{env: wtEnv(tt.vars, tt.wd, "host", nil), dir: tt.flag, dirSet: tt.flag != ""}
			got, err := r.boardDir()
			if tt.wantErr {
				if err == nil {
					t.Fatalf("boardDir = %q, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("boardDir = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOwnerName(t *testing.T) {
	all := map[string]string{
		"PICKUP_OWNER": "pickup-owner", "CLAUDE_SESSION_ID": "claude-id", "CODEX_THREAD_ID": "codex-id",
		"USER": "bob", "LOGNAME": "logname",
	}
	without := func(keys ...string) map[string]string {
		m := map[string]string{}
		for k, v := range all {
			m[k] = v
		}
		for _, k := range keys {
			delete(m, k)
		}
		return m
	}
	tests := []struct {
		name    string
		flag    string // --owner
		vars    map[string]string
		host    string
		hostErr error
		want    string
		wantErr error
	}{
		{name: "--owner wins", flag: "flag-owner", vars: all, host: "box", want: "flag-owner"},
		{name: "invalid --owner", flag: "../x", vars: all, host: "box", wantErr: sessions.ErrInvalidID},
		{name: "PICKUP_OWNER", vars: all, host: "box", want: "pickup-owner"},
		{name: "CLAUDE_SESSION_ID", vars: without("PICKUP_OWNER"), host: "box", want: "claude-id"},
		{name: "CODEX_THREAD_ID", vars: without("PICKUP_OWNER", "CLAUDE_SESSION_ID"), host: "box", want: "codex-id"},
		{name: "a UUID session id", vars: map[string]string{"CLAUDE_SESSION_ID": "0f8fad5b-d9cb-469f-a165-70867728950e"}, want: "0f8fad5b-d9cb-469f-a165-70867728950e"},
		{name: "user at host", vars: without("PICKUP_OWNER", "CLAUDE_SESSION_ID", "CODEX_THREAD_ID"), host: "box.example.com", want: "bob-box"},
		{name: "LOGNAME when USER is unset", vars: map[string]string{"LOGNAME": "carol"}, host: "box", want: "carol-box"},
		{name: "no user", vars: map[string]string{}, host: "box", want: "user-box"},
		{name: "no host name", vars: map[string]string{"USER": "bob"}, hostErr: errors.New("no hostname"), want: "bob-localhost"},
		{name: "empty host name", vars: map[string]string{"USER": "bob"}, host: "", want: "bob-localhost"},
		{name: "user name sanitized", vars: map[string]string{"USER": "John Smith"}, host: "my_box", want: "John-Smith-my_box"},
		{name: "user name with a leading underscore", vars: map[string]string{"USER": "_www"}, host: "box", want: "www-box"},
		{name: "invalid PICKUP_OWNER", vars: map[string]string{"PICKUP_OWNER": "a/b", "CLAUDE_SESSION_ID": "claude-id"}, host: "box", wantErr: sessions.ErrInvalidID},
		{name: "invalid CLAUDE_SESSION_ID", vars: map[string]string{"CLAUDE_SESSION_ID": ".hidden", "CODEX_THREAD_ID": "codex-id"}, host: "box", wantErr: sessions.ErrInvalidID},
		{name: "invalid CODEX_THREAD_ID", vars: map[string]string{"CODEX_THREAD_ID": "thread id"}, host: "box", wantErr: sessions.ErrInvalidID},
		{name: "too long PICKUP_OWNER", vars: map[string]string{"PICKUP_OWNER": strings.Repeat("a", 129)}, host: "box", wantErr: sessions.ErrInvalidID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &run{env: wtEnv(tt.vars, "/", tt.host, tt.hostErr), owner: tt.flag}
			got, err := r.ownerName()
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("ownerName = %q, %v; want an error matching %v", got, err, tt.wantErr)
				}
				if ExitCode(err) != ExitUsage {
					t.Errorf("exit code for %v = %d, want %d", err, ExitCode(err), ExitUsage)
				}
				return
			}
			if err != nil {
				t.Fatalf("ownerName: %v", err)
			}
			if got != tt.want {
				t.Errorf("ownerName = %q, want %q", got, tt.want)
			}
			if err := sessions.ValidateOwner(got); err != nil {
				t.Errorf("ownerName = %q, not a valid owner: %v", got, err)
			}
			// A second call gives the same owner.
			if again, err := r.ownerName(); again != got || err != nil {
				t.Errorf("second ownerName = %q, %v; want %q", again, err, got)
			}
		})
	}
}
