package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pickup-dev/pickup/claim"
)

// maxHintIDs is how many ids a hint names before "and N more".
const maxHintIDs = 3

// blockedHint is the hint for next when every session left in todo/ waits
// on dependencies (once claim.Explain has said why), or "".
func blockedHint(err error) string {
	var be *claim.BlockedError
	if !errors.As(err, &be) || len(be.Why) == 0 {
		return ""
	}
	if len(be.Forever) == 0 {
		return "every session left in todo waits on others not done yet; `pickup next --wait=10m` waits until one is ready, `pickup list` shows what each waits on"
	}
	return fmt.Sprintf("%s can never be taken as the board stands: `pickup doctor` shows the depends_on line of each; `pickup claim ID` takes one anyway", andList(be.Forever))
}

// andList writes ids as "a", "a and b", "a, b and c", or "a, b, c and 4 more".
func andList(ids []string) string {
	if len(ids) > maxHintIDs {
		return fmt.Sprintf("%s and %d more", strings.Join(ids[:maxHintIDs], ", "), len(ids)-maxHintIDs)
	}
	if len(ids) == 1 {
		return ids[0]
	}
	return strings.Join(ids[:len(ids)-1], ", ") + " and " + ids[len(ids)-1]
}
