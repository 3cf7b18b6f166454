package sessions

import (
	"sort"
	"testing"
	"time"
)

// Ids with a clone's suffix are valid, differ between clones in the same
// second, and sort by creation second whatever the suffix and counter.
func TestIDCandidateWithSuffix(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 9, 15, 4, 0, time.UTC)
	var ids []string
	for _, tc := range []struct {
		at     time.Time
		n      int
		suffix string
		want   string
	}{
		{t0, 0, "", "2026-11-22_09-15-04"},
		{t0, 0, "k3f9q", "2026-11-22_09-15-04.k3f9q"},
		{t0, 1, "k3f9q", "2026-11-22_09-15-04.k3f9q-2"},
		{t0, 0, "zzzzz", "2026-11-22_09-15-04.zzzzz"},
		{t0.Add(time.Second), 0, "aaaaa", "2026-11-22_09-15-05.aaaaa"},
		{t0.Add(time.Second), 9, "aaaaa", "2026-11-22_09-15-05.aaaaa-10"},
	} {
		got := idCandidateWith(tc.at, tc.n, tc.suffix)
		if got != tc.want {
			t.Errorf("idCandidateWith(%v, %d, %q) = %q, want %q", tc.at, tc.n, tc.suffix, got, tc.want)
		}
		if err := ValidateID(got); err != nil {
			t.Errorf("%q: %v", got, err)
		}
		ids = append(ids, got)
	}
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	if sorted[len(sorted)-1][:19] != "2026-11-22_09-15-05" || sorted[len(sorted)-2][:19] != "2026-11-22_09-15-05" {
		t.Errorf("ids of a later second do not sort last: %v", sorted)
	}
	if idCandidateWith(t0, 0, "aaaaa") == idCandidateWith(t0, 0, "bbbbb") {
		t.Error("two clones' suffixes give the same id in the same second")
	}
}
