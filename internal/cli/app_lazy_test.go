package cli

import (
	"slices"
	"strings"
	"testing"
)

// The table's names must be the commands' own: a name missing here would
// make that command build all the others again, and a wrong one would
// build a command that urfave/cli then does not find.
func TestCommandTableNames(t *testing.T) {
	r := reorderTestRun()
	for _, spec := range commandTable() {
		cmd := spec.build(r)
		if !slices.Equal(cmd.Names(), spec.names) {
			t.Errorf("commandTable names %q, the command it builds %q", spec.names, cmd.Names())
		}
	}
}

func TestCommandsBuildsTheNamedOne(t *testing.T) {
	tests := []struct {
		args string
		want []string // nil: every command
	}{
		{"pickup hook session-start", []string{"hook"}},
		{"pickup --owner o --no-sync next", []string{"next"}},
		{"pickup --dir=d ls", []string{"list"}},
		{"pickup --owner next list", []string{"list"}}, // next is --owner's value
		{"pickup", nil},
		{"pickup --help", nil},
		{"pickup help next", nil},
		{"pickup nxt", nil},
		{"pickup -- next", nil},
		{"pickup --owner", nil},
	}
	r := reorderTestRun()
	all := len(commandTable())
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			cmds := r.commands(r.globalFlags(), strings.Fields(tt.args))
			var got []string
			for _, c := range cmds {
				got = append(got, c.Name)
			}
			if tt.want == nil && len(got) != all {
				t.Errorf("built %q, want all %d commands", got, all)
			}
			if tt.want != nil && !slices.Equal(got, tt.want) {
				t.Errorf("built %q, want %q", got, tt.want)
			}
		})
	}
}

// Whatever the arguments, the app built for them rewrites and checks them
// exactly as the app with every command does.
func TestLazyAppReadsArgsAsTheFullOne(t *testing.T) {
	words := []string{"claim", "next", "ls", "lock", "run", "hook", "X", "-", "--", "--json", "--owner", "--dir=d", "--title", "--wait", "10m", "help"}
	full := reorderTestRun().app(nil)
	for _, a := range words {
		for _, b := range words {
			for _, c := range words {
				args := []string{"pickup", a, b, c, "end"}
				lazy := reorderTestRun().app(args)
				if got, want := reorderArgs(lazy, args), reorderArgs(full, args); !slices.Equal(got, want) {
					t.Fatalf("reorderArgs(%q) = %q with the lazy app, %q with every command", args, got, want)
				}
				for _, n := range []int{3, 4} {
					lazy := reorderTestRun().app(args[:n])
					if got, want := danglingFlag(lazy, args[:n]), danglingFlag(full, args[:n]); got != want {
						t.Fatalf("danglingFlag(%q) = %q with the lazy app, %q with every command", args[:n], got, want)
					}
				}
			}
		}
	}
}
