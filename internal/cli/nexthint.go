package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pickup-dev/pickup/claim"
)

// maxHintIDs is how many ids a hint names before "and N more".
const maxHintIDs = 3

// blockedHint is the hint for next when nothing is available for a reason
// worth naming (once claim.Explain has said why): every session left in
// todo/ waits on dependencies, or none matches the tag filter. Commands it
// suggests keep the caller's filter. "" for an empty todo/.
func blockedHint(err error) string {
	var fe *claim.FilterError
	filter := ""
	if errors.As(err, &fe) {
		filter = " " + fe.Filter.String()
	}
	var be *claim.BlockedError
	if !errors.As(err, &be) || len(be.Why) == 0 {
		if fe != nil && fe.Excluded > 0 {
			return fmt.Sprintf("no session in todo matches%s (%d do not): `pickup next%s --wait=10m` waits for one, `pickup next` without the filter takes any, `pickup list --state todo --json` shows their tags",
				filter, fe.Excluded, filter)
		}
		return ""
	}
	if len(be.Forever) == 0 {
		what := "every session left in todo"
		if fe != nil {
			what = "every session in todo that matches" + filter
		}
		return fmt.Sprintf("%s waits on others not done yet; `pickup next%s --wait=10m` waits until one is ready, `pickup list%s` shows what each waits on",
			what, filter, filter)
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
