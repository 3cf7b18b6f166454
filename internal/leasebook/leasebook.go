// Package leasebook gives an arbiter (internal/arbiter/gitremote, internal/arbiter/postgres)
// this machine's lease records, claim.Leases, as the arbiter.Leases it
// needs: the arbiter packages cannot import claim, which imports them
// (through internal/arbiter/location). claim.New does the same for the
// arbiters it opens; the CLI and the live board use this package.
package leasebook

import (
	"errors"
	"github.com/pickup-dev/pickup/internal/proc"
	"os"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/sessions"
)

// Of is b's lease records as an arbiter needs them.
func Of(b *sessions.Board) arbiter.Leases { return book{&claim.Leases{Board: b}} }

type book struct{ l *claim.Leases }

func (k book) FenceStale(owner, id, reason string) error {
	return k.l.FenceAs(owner, id, claim.OwnerStale, reason)
}

func (k book) HeldHere(owner string) (bool, error) {
	l, err := k.l.Get(owner)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil && len(l.Holders) > 0, err
}

func (k book) Renew(owner string) error {
	_, err := k.l.Heartbeat(owner)
	return err
}

func (k book) Holders(owner string) []proc.Process {
	l, err := k.l.Get(owner)
	if err != nil {
		return nil
	}
	ps := make([]proc.Process, len(l.Holders))
	for i, h := range l.Holders {
		ps[i] = proc.Process(h)
	}
	return ps
}
