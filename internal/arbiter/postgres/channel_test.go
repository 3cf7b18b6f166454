package postgres

import (
	"bufio"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWaitOnAStuckDaemon: a daemon that takes a wait and never answers
// it (stuck in the database, as one was after a server restart) does not
// hold the caller for ever: past the wait's timeout and the channel's
// slack, the call fails as a broken channel, which the caller opens
// anew; the channel refuses every later request.
func TestWaitOnAStuckDaemon(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "stuck.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	held := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		_, _ = bufio.NewReader(c).ReadString('\n') // the request, never answered
		held <- c
	}()
	f, err := dialUnix(sock)
	if err != nil {
		t.Fatal(err)
	}
	c := &channel{url: "postgres://stuck", sock: f, w: f, stdout: bufio.NewReader(f), slack: 200 * time.Millisecond}
	defer c.close()
	w := &Waiter{ch: c}
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := w.WaitMoves(7, 100*time.Millisecond)
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		c.abort() // the call holds the channel: let it go
		t.Fatal("WaitMoves on a daemon that never answers did not return within a minute")
	}
	took := time.Since(start)
	var de *DatabaseError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "i/o timeout") {
		t.Fatalf("WaitMoves = %v, want a *DatabaseError that says i/o timeout", err)
	}
	if took < 300*time.Millisecond {
		t.Errorf("WaitMoves gave up after %v, before its timeout and slack (300ms)", took)
	}
	if !c.transportFailed() {
		t.Error("the channel is not marked broken after the stuck wait")
	}
	if conn := <-held; conn != nil {
		conn.Close()
	}
}
