package sessions

import (
	"fmt"
	"strings"
)

// ParseConfig reads config.yaml's content (path names it in messages):
// what Board.Config returns for a board whose file holds data. A shared
// board checks the config.yaml of a fetched tip with it before taking it.
func ParseConfig(path string, data []byte) (Config, error) {
	c, _, err := parseConfig(path, data)
	return c, err
}

// ValidBoardBranch checks that name can be a shared board's branch: a
// branch name as git check-ref-format --branch accepts it (no "..", no
// control characters, space, ~ ^ : ? * [ \, no component starting with
// "." or ending with ".lock", no "@{", not "@", not ending with "/" or
// "."), and not HEAD (which is no branch) nor one that starts with "-".
// A range like a..b is refused by the ".." rule. That it is not the
// clone's code branch is checked where the clone is known (pickup init
// --shared, and every command of a shared board).
func ValidBoardBranch(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("%q is not a valid branch name for the board: %s", name, why)
	}
	switch {
	case name == "":
		return bad("it is empty")
	case name == "HEAD" || strings.HasPrefix(name, "refs/"):
		return bad("it names a ref, not a branch; write a branch name such as pickup")
	case name == "@":
		return bad(`"@" is HEAD`)
	case strings.HasPrefix(name, "-"):
		return bad(`it starts with "-"`)
	case strings.Contains(name, ".."):
		return bad(`it holds ".." (a range of commits, not a branch)`)
	case strings.Contains(name, "@{"):
		return bad(`it holds "@{"`)
	case strings.HasSuffix(name, "/") || strings.HasSuffix(name, "."):
		return bad(`it ends with "/" or "."`)
	case strings.Contains(name, "//"):
		return bad(`it holds "//"`)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return bad(fmt.Sprintf("it holds %q", r))
		}
	}
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock") {
			return bad(`a part starts with "." or ends with ".lock"`)
		}
	}
	return nil
}
