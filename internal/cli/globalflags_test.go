package cli

import (
	"slices"
	"testing"

	ucli "github.com/urfave/cli/v2"
)

// TestGlobalFlagNames: the fixed names the global flags answer with are
// the names urfave/cli computes for the flags they wrap, and the wrappers
// still say whether they take a value.
func TestGlobalFlagNames(t *testing.T) {
	r := &run{env: &Env{}}
	for _, f := range r.globalFlags() {
		var inner ucli.Flag
		switch w := f.(type) {
		case stringFlag:
			inner = w.StringFlag
		case boolFlag:
			inner = w.BoolFlag
		case intFlag:
			inner = w.IntFlag
		default:
			t.Fatalf("global flag %v is a %T, not a fixed-name wrapper", f.Names(), f)
		}
		t.Run(inner.Names()[0], func(t *testing.T) {
			if !slices.Equal(f.Names(), inner.Names()) {
				t.Errorf("Names() = %q, the flag's own names are %q", f.Names(), inner.Names())
			}
			_, isBool := inner.(*ucli.BoolFlag)
			for _, arg := range []string{"--" + inner.Names()[0], "-" + inner.Names()[0]} {
				if got := takesValue([]ucli.Flag{f}, arg); got == isBool {
					t.Errorf("takesValue(%s) = %v for a %T", arg, got, inner)
				}
			}
		})
	}
}
