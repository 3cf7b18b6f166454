package claim_test

import (
	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/proc"
)

// holdersOf is ps as claim's holders (the tests find processes with
// internal/proc).
func holdersOf(ps []proc.Process) []claim.Holder {
	hs := make([]claim.Holder, len(ps))
	for i, p := range ps {
		hs[i] = claim.Holder(p)
	}
	return hs
}
