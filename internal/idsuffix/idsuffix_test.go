package idsuffix

import "testing"

func TestNewAndValid(t *testing.T) {
	for _, tc := range []struct {
		name   string
		random []byte
		want   string
	}{
		{"zeros", []byte{0, 0, 0, 0, 0}, "aaaaa"},
		{"first byte is a letter", []byte{31, 31, 31, 31, 31}, "f7777"},
		{"extra bytes ignored", []byte{1, 2, 3, 4, 5, 6}, "bcdef"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := New(tc.random)
			if err != nil || got != tc.want {
				t.Fatalf("New(%v) = %q, %v; want %q", tc.random, got, err, tc.want)
			}
			if !Valid(got) {
				t.Fatalf("%q is not a valid suffix", got)
			}
		})
	}
	if _, err := New([]byte{1, 2}); err == nil {
		t.Fatal("New with too few random bytes: no error")
	}
	for _, bad := range []string{"", "ABC", "a.b", "a-b", "abcdefghijklmnopq"} {
		if Valid(bad) {
			t.Errorf("Valid(%q) = true", bad)
		}
	}
}
