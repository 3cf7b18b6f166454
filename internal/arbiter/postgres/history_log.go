package postgres

// A PostgreSQL board's history branch rewound by someone (history.go):
// the pusher puts the transitions that the lost commits listed on the
// branch again, and says so in its log, which sync and status show.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/sessions"
)

// historyLogFile, in the board's runtime folder, is the history pusher's
// log of what it repaired (its last historyLogLines lines), for status.
const historyLogFile = "pg-history.log"

const historyLogLines = 20

// rewoundLine says that the branch at where no longer has dropped (the
// commit pickup pushed there last), and how many transitions go on it
// again.
func rewoundLine(dropped string, repushed int, where string) string {
	dropped = dropped[:min(12, len(dropped))]
	return fmt.Sprintf("the board branch %s was rewound (force-pushed back or deleted: it no longer has %s, pickup's last push there): %d transitions no longer on it are pushed again", where, dropped, repushed)
}

// logHistory appends line, dated, to the pusher's log of board b.
func logHistory(b *sessions.Board, line string) {
	path := filepath.Join(b.RuntimeDir(), historyLogFile)
	var lines []string
	if data, err := fsx.ReadRegular(path); err == nil {
		lines = strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	} else if !errors.Is(err, os.ErrNotExist) {
		return
	}
	lines = append(lines, time.Now().UTC().Format(time.RFC3339)+" "+line)
	lines = lines[max(0, len(lines)-historyLogLines):]
	_ = os.MkdirAll(b.RuntimeDir(), 0o755)
	_ = fsx.WriteReplace(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644, false)
}

// lastHistoryLog is the pusher's log's last line on board b, "" if none.
func lastHistoryLog(b *sessions.Board) string {
	data, err := fsx.ReadRegular(filepath.Join(b.RuntimeDir(), historyLogFile))
	if err != nil {
		return ""
	}
	text := strings.TrimRight(string(data), "\n")
	return text[strings.LastIndexByte(text, '\n')+1:]
}
