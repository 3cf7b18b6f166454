package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v2"
)

// yamlError turns a YAML error into one that names the line in the file.
// yaml counts lines from the first line after "---"; some of its errors
// (control characters, bad UTF-8, bad base64) name no line at all, and then
// the first line with bytes yaml refuses, else the first line whose prefix
// no longer parses, is the culprit.
func yamlError(body []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "unmarshal errors:\n"); ok {
		// One problem per line, each naming its own line.
		var lines []string
		for _, l := range strings.Split(rest, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
		msg = strings.Join(lines, "\n")
	}
	if msg, ok := renumberLines(msg); ok {
		return errors.New(msg)
	}
	lines := bytes.SplitAfter(body, []byte("\n"))
	for i, l := range lines {
		if !utf8.Valid(l) || hasControl(l) {
			return fmt.Errorf("line %d: %s", i+2, msg)
		}
	}
	// Else the first line whose prefix no longer parses, found by
	// bisection: a frontmatter of 64 KiB can have thousands of lines, and
	// parsing every prefix in turn took a minute.
	ends := make([]int, len(lines)) // ends[i]: where line i ends in body
	for i, l := range lines {
		ends[i] = len(l)
		if i > 0 {
			ends[i] += ends[i-1]
		}
	}
	i := sort.Search(len(lines), func(i int) bool {
		var v any
		return yaml.Unmarshal(body[:ends[i]], &v) != nil
	})
	if i == len(lines) {
		i = 0
	}
	return fmt.Errorf("line %d: %s", i+2, msg)
}

// renumberLines adds one to the number in every "line N" of msg, and
// reports whether there was one. (A regexp would do, but compiling it costs
// every pickup process start-up time, and it is rarely needed.)
func renumberLines(msg string) (string, bool) {
	parts := strings.Split(msg, "line ") // "line " cannot overlap itself
	found := false
	for i := 1; i < len(parts); i++ {
		if digits := len(parts[i]) - len(strings.TrimLeft(parts[i], "0123456789")); digits > 0 {
			n, _ := strconv.Atoi(parts[i][:digits])
			parts[i] = strconv.Itoa(n+1) + parts[i][digits:]
			found = true
		}
	}
	return strings.Join(parts, "line "), found
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
}
