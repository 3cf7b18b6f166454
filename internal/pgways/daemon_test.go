package pgways

import (
	"crypto/sha256"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDaemonGoneAtConnect: the machine's pickup-postgres daemon exits
// (idle) just as a command connects to it: the command starts a new one
// and succeeds, instead of failing with exit 8.
func TestDaemonGoneAtConnect(t *testing.T) {
	db, url := newDatabase(t)
	c := clones(t, url, 1)[0]
	// Stand in for a daemon on its way out: take its socket (the real one
	// exits when its socket is replaced), accept one connection, then go
	// away before answering.
	sum := sha256.Sum256([]byte(url))
	sock := filepath.Join(runDir, "pg-"+hex.EncodeToString(sum[:8])+".sock")
	_ = os.Remove(sock)
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		conn, err := l.Accept()
		l.Close()
		_ = os.Remove(sock)
		if err == nil {
			conn.Close()
		}
	}()
	id := strings.TrimSpace(c.must("", "new", "-t", "after the daemon left"))
	<-accepted
	if got := server.psql(t, db, "SELECT count(*) FROM pickup_sessions WHERE id = '"+id+"'"); got != "1" {
		t.Errorf("the database has %s rows for %s, want 1", got, id)
	}
}
