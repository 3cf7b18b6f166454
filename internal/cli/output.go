package cli

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/pickup-dev/pickup/internal/textsafe"
	"github.com/pickup-dev/pickup/sessions"
)

// sanitize escapes, for a one-line field (a title, an owner, a reason),
// what must not reach a terminal raw: see textsafe.Line.
func sanitize(s string) string { return textsafe.Line(s) }

func (r *run) printJSON(v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := r.env.Stdout.Write(textsafe.JSON(buf.Bytes()))
	return err
}

// describe is the one-line human description of a session.
func describe(s sessions.Session) string {
	line := fmt.Sprintf("%s [%s]", s.ID, s.Priority)
	if s.Title != "" {
		line += " " + sanitize(s.Title)
	}
	return line
}

// printSession prints a session after a transition: the JSON object, or a
// line saying what happened and where the file is now.
func (r *run) printSession(verb string, s sessions.Session) error {
	if r.json {
		return r.printJSON(s)
	}
	r.printf("%s %s\n", verb, describe(s))
	r.printf("  file: %s\n", s.Path)
	if s.Problem != "" {
		r.printf("  warning: broken frontmatter: %s (run `pickup doctor`)\n", sanitize(s.Problem))
	}
	return nil
}

// withFields returns the JSON object of s with extra fields added.
func withFields(s sessions.Session, extra map[string]any) map[string]any {
	data, _ := json.Marshal(s)
	obj := map[string]any{}
	_ = json.Unmarshal(data, &obj)
	for k, v := range extra {
		obj[k] = v
	}
	return obj
}

// rawEnv is the environment with the streams as given, unescaped (see
// Main); a run made without Main (in tests) has only env.
func (r *run) rawEnv() *Env {
	if r.raw != nil {
		return r.raw
	}
	return r.env
}
