package arbiter

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/sessions"
)

// AppendConfig adds line to b's config.yaml (init --shared records the
// arbiter there), after a newline if the file does not end with one.
func AppendConfig(b *sessions.Board, line string) error {
	path := filepath.Join(b.Dir, sessions.ConfigFile)
	old, err := fsx.ReadRegular(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if len(old) > 0 && !strings.HasSuffix(string(old), "\n") {
		line = "\n" + line
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
