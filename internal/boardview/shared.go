package boardview

import (
	"time"

	"github.com/pickup-dev/pickup/sessions"
)

// What the web board (internal/cmd/pickup-web) reads of the state and the
// terminal board's wording, so that both views judge and say the same.

// Names returns the owners the board knows, sorted: what the owner filter
// offers.
func (s *State) Names(now time.Time) []string { return s.names(now) }

// Tags returns the tags of the sessions not done, sorted: what the tag
// filter offers.
func (s *State) Tags() []string { return s.tags() }

// Keeps reports whether the filter lets it through.
func (f Filter) Keeps(it *Item) bool { return f.keeps(it) }

// AgeText is a duration as the board shows ages: 12s, 5m, 3h, 4d.
func AgeText(d time.Duration) string { return ageText(d) }

// WaitsText says what a todo session waits on ("" if nothing), cleaned.
func WaitsText(w sessions.Waits) string {
	if len(w.On) == 0 {
		return ""
	}
	return waitsText(w)
}

// SparkEvery is the interval of the throughput picture.
const SparkEvery = sparkEvery
