package cli

import (
	"errors"

	"github.com/pickup-dev/pickup/sessions"
)

// configFindings reports the mistakes of the board's config.yaml as
// doctor findings, each with its line. Nothing repairs them: which value
// was meant is the user's to say.
func configFindings(b *sessions.Board) []sessions.Finding {
	_, err := b.Config()
	if err == nil {
		return nil
	}
	var ce *sessions.ConfigError
	if !errors.As(err, &ce) {
		return []sessions.Finding{{Kind: "config", Path: b.Dir, Message: err.Error()}}
	}
	out := make([]sessions.Finding, 0, len(ce.Problems))
	for _, p := range ce.Problems {
		out = append(out, sessions.Finding{Kind: "config", Path: ce.Path, Line: p.Line, Message: p.Message})
	}
	return out
}
