package postgres

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/pickup-dev/pickup/internal/arbiter/dburl"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The machine's daemon. Starting a helper and opening a PostgreSQL
// connection (a backend forked, authentication) for every pickup process
// costs more than the transition itself, so pickup talks to one
// pickup-postgres per database and machine on a unix socket, which keeps
// a pool of connections; the first pickup that finds none starts it. The
// socket is made with the system calls, not package net (see the package
// doc). Without a daemon (PICKUP_PG_DAEMON=0, a password in the URL, a
// daemon that does not start) pickup starts a helper of its own.

// daemonStart is how long pickup waits for a daemon it started to listen.
const daemonStart = 5 * time.Second

// runDir is where the sockets are: $PICKUP_PG_RUNDIR, else
// $XDG_RUNTIME_DIR/pickup, else <tmp>/pickup-<uid>; a folder of this user's
// only (0700), never a link.
func runDir() (string, error) {
	dir := os.Getenv("PICKUP_PG_RUNDIR")
	if dir == "" {
		if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" {
			dir = filepath.Join(x, "pickup")
		} else {
			dir = filepath.Join(os.TempDir(), "pickup-"+strconv.Itoa(os.Getuid()))
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return "", err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Getuid() || st.Mode&0o077 != 0 {
		return "", fmt.Errorf("%s must be a folder of this user's only (mode 0700)", dir)
	}
	return dir, nil
}

// SocketPath is the socket of the daemon that helper serves url with, in
// the folder dir (see runDir; the benchmark and tests talk to the daemon
// directly).
func SocketPath(dir, helper, url string) string { return socketPath(dir, helper, url) }

// socketPath is the daemon's socket for url, served by the helper program
// at path helper as it is now: its name hashes the URL and the helper's
// path, size and modification time. A pickup installed anew (another
// helper) never talks to the daemon that the one before it started,
// which may not know its requests, nor behave as it expects; that daemon
// exits after a minute without a client.
func socketPath(dir, helper, url string) string {
	h := sha256.New()
	h.Write([]byte(url))
	h.Write([]byte{0})
	if abs, err := filepath.Abs(helper); err == nil {
		helper = abs
	}
	h.Write([]byte(helper))
	if st, err := os.Stat(helper); err == nil {
		fmt.Fprintf(h, "\x00%d\x00%d", st.Size(), st.ModTime().UnixNano())
	}
	return filepath.Join(dir, "pg-"+hex.EncodeToString(h.Sum(nil)[:8])+".sock")
}

// dialUnix connects to a unix socket and returns it as a file.
func dialUnix(path string) (*os.File, error) {
	// SOCK_CLOEXEC is Linux's: set close-on-exec right after (a process
	// started in between would inherit the socket, harmlessly).
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(fd)
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	// Non-blocking, so that os.NewFile puts it on the runtime's poller:
	// a wait's read then has a deadline (channel.call).
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// dialDaemon connects to the daemon for url, starting it if none
// answers; nil if there is none to use, and why if that was not asked
// for (PICKUP_PG_DAEMON=0, a password in the URL): the command then
// starts a helper of its own, which costs it a connection to the server.
func dialDaemon(helper, url string) (*os.File, string) {
	if os.Getenv("PICKUP_PG_DAEMON") == "0" {
		return nil, ""
	}
	if _, hasPassword := dburl.Redact(url); hasPassword {
		return nil, "" // never on a command line
	}
	slower := "each command connects to the database on its own (slower)"
	dir, err := runDir()
	if err != nil {
		return nil, fmt.Sprintf("no pickup-postgres daemon: %v; %s. Fix the folder, or set PICKUP_PG_RUNDIR to a folder of this user's only (mode 0700)", err, slower)
	}
	sock := socketPath(dir, helper, url)
	if f, err := dialUnix(sock); err == nil {
		return f, ""
	}
	args := []string{"--serve", sock}
	if idle := os.Getenv("PICKUP_PG_IDLE"); idle != "" {
		args = append(args, "--idle", idle)
	}
	cmd := exec.Command(helper, append(args, url)...)
	if logf, err := os.OpenFile(sock+".log", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err == nil {
		cmd.Stderr = logf
		defer logf.Close()
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Sprintf("could not start the pickup-postgres daemon: %v; %s", err, slower)
	}
	go func() { _ = cmd.Wait() }() // reap it if it exits (another daemon won)
	deadline := time.Now().Add(daemonStart)
	for delay := 500 * time.Microsecond; time.Now().Before(deadline); delay = min(2*delay, 20*time.Millisecond) {
		time.Sleep(delay)
		if f, err := dialUnix(sock); err == nil {
			return f, ""
		}
	}
	return nil, fmt.Sprintf("the pickup-postgres daemon did not listen on %s within %s (its log: %s.log); %s", sock, daemonStart, sock, slower)
}
