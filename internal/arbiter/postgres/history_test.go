package postgres

import (
	"slices"
	"strings"
	"testing"
)

func TestSeqsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		in   []int64
		text string
	}{
		{[]int64{1}, "1"},
		{[]int64{1, 2, 3, 5, 7, 8}, "1-3,5,7-8"},
		{[]int64{9, 3, 4, 3}, "3-4,9"},
	} {
		got := FormatSeqs(tc.in)
		if got != tc.text {
			t.Errorf("FormatSeqs(%v) = %q, want %q", tc.in, got, tc.text)
		}
		back, err := ParseSeqs(got)
		want := slices.Compact(slices.Sorted(slices.Values(tc.in)))
		if err != nil || !slices.Equal(back, want) {
			t.Errorf("ParseSeqs(%q) = %v, %v; want %v", got, back, err, want)
		}
	}
	for _, bad := range []string{"", "a", "3-1", "1-", "1-99999999999"} {
		if _, err := ParseSeqs(bad); err == nil {
			t.Errorf("ParseSeqs(%q) took it", bad)
		}
	}
}

func TestMessage(t *testing.T) {
	msg := Message([]Event{
		{Seq: 7, ID: "a", Op: "new", Dst: "todo", Owner: "ana"},
		{Seq: 8, ID: "a", Op: "next", Src: "todo", Dst: "doing/w1", Owner: "w1"},
		{Seq: 10, ID: "a", Op: "release", Src: "doing/w1", Dst: "todo", Owner: "w1", Reason: "two\nlines"},
	}, "postgres://db/x")
	want := "pickup: 3 transitions\n\na new ∅ → todo by ana\na next todo → doing/w1 by w1\na release doing/w1 → todo by w1 (two lines)\n\nPickup-Events: 7-8,10\nPickup-Database: postgres://db/x\n"
	if msg != want {
		t.Errorf("Message:\n%s\nwant:\n%s", msg, want)
	}
	if !strings.HasPrefix(Message([]Event{{Seq: 1, ID: "b", Op: "new", Dst: "todo"}}, "d"), "pickup: 1 transition\n") {
		t.Error("one transition's subject")
	}
}
