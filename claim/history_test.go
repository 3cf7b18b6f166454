package claim_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/pickup-dev/pickup/sessions"
)

// Helpers of the history tests: where the board says each session is, and
// where its history says it is.

// pkPlaces returns each session's one place on the board ("todo",
// "doing/<owner>", "done"); a session in several places fails the test.
func pkPlaces(t *testing.T, b *sessions.Board) map[string]string {
	t.Helper()
	w, err := pkWalk(b)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for id, places := range w {
		if len(places) != 1 || strings.HasPrefix(id, "stray:") {
			t.Errorf("%s is at %v, want exactly one place", id, places)
			continue
		}
		out[id] = places[0]
	}
	return out
}

// pkLastRecorded returns where the history of each session ends, as
// `pickup log ID` shows it: its events in time order, the last one's
// destination. It also returns how many lines of the log are not events.
func pkLastRecorded(t *testing.T, b *sessions.Board) (map[string]sessions.Event, int) {
	t.Helper()
	events, bad, err := b.Events("")
	if err != nil {
		t.Fatal(err)
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].Time.Before(events[j].Time) })
	last := map[string]sessions.Event{}
	for _, e := range events {
		last[e.ID] = e
	}
	return last, len(bad)
}

// pkGaps lists the sessions whose history does not end where they are
// (sessions with no history at all have nothing to compare).
func pkGaps(t *testing.T, b *sessions.Board) []string {
	t.Helper()
	last, _ := pkLastRecorded(t, b)
	var gaps []string
	for id, place := range pkPlaces(t, b) {
		if e, ok := last[id]; ok && e.To != place {
			gaps = append(gaps, id)
		}
	}
	sort.Strings(gaps)
	return gaps
}

// pkDoctorHistory returns the ids of doctor's history findings.
func pkDoctorHistory(findings []sessions.Finding) []string {
	var ids []string
	for _, f := range findings {
		if f.Kind == "history" {
			ids = append(ids, f.ID)
		}
	}
	sort.Strings(ids)
	return ids
}
