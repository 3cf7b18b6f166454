package postgres

import (
	"encoding/json"

	"github.com/pickup-dev/pickup/internal/proc"
)

// An owner's processes reach every board of its machine through the
// database. Each transition an owner makes, and each of its heartbeats,
// records the processes of its lease on this board (pickup_holders, one
// row per owner and board); each state read brings the rows that boards
// of this machine recorded for owners who hold sessions. So a board of
// the owner's own machine whose directory has no lease of that owner (the
// owner works in another clone) judges it by its processes, as its own
// board does: a killed agent's sessions come back at once from any board
// of its machine (internal/boardhook, claim.Leases), and status
// says it works on this machine. Boards of other machines cannot check
// those processes and judge the owner by its heartbeat, as before.
//
// Limits: the processes are as the owner's last transition or heartbeat
// left them; a process added to its lease since (a new agent process of
// the same owner that has not claimed yet) is not known elsewhere until
// then. That process makes its claim through the database, which records
// it in the same statement.

// leaseHolders is owner's lease processes on this board, as JSON for a
// Move or a beat (nil: no lease here, or none to tell).
func (s *Board) leaseHolders(owner string) json.RawMessage {
	if owner == "" {
		return nil
	}
	if s.Leases == nil {
		return nil
	}
	holders := s.Leases.Holders(owner)
	if len(holders) == 0 {
		return nil
	}
	data, err := json.Marshal(holders)
	if err != nil {
		return nil
	}
	return data
}

// hearHolders keeps the lease processes a state read brought (s.mu held).
func (s *Board) hearHolders(rows []OwnerHolders) {
	byOwner := make(map[string][]proc.Process, len(rows))
	for _, r := range rows {
		var ps []proc.Process
		if json.Unmarshal(r.Holders, &ps) != nil {
			continue
		}
		byOwner[r.Owner] = append(byOwner[r.Owner], ps...)
	}
	s.holders = byOwner
}

// HeardHolders is the processes of owner's leases that boards of this
// machine recorded in the database, as the last Refresh read them
// (internal/boardhook).
func (s *Board) HeardHolders(owner string) []proc.Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.holders[owner]
}
