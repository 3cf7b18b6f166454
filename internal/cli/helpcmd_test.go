package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pickup-dev/pickup/internal/help"
)

// TestTopicNamesAreNotCommands: `pickup help NAME` shows a command's help
// when NAME is a command, so a topic named like one could never be read.
func TestTopicNamesAreNotCommands(t *testing.T) {
	for _, tp := range help.Topics() {
		if (isCommand(tp.Name) && tp.Name != mcpHasTopic) || tp.Name == "topics" {
			t.Errorf("help topic %q has the name of a command (or of `pickup help topics`): rename internal/help/topics/%s.md", tp.Name, tp.Name)
		}
	}
}

// TestExitCodesTable checks that the exit-codes topic, from which `pickup
// help` lists the exit codes, documents exactly the Exit* constants of
// this package: a new exit code without a row (or a row without a code)
// fails here.
func TestExitCodesTable(t *testing.T) {
	var consts []int
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "Exit") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok {
						t.Fatalf("%s: %s is not a literal", f, name.Name)
					}
					n, _ := strconv.Atoi(lit.Value)
					consts = append(consts, n)
				}
			}
		}
	}
	var documented []int
	for _, c := range help.ExitCodes() {
		documented = append(documented, c.Code)
	}
	slices.Sort(consts)
	slices.Sort(documented)
	if len(consts) < 10 || !slices.Equal(consts, documented) {
		t.Errorf("exit codes: the constants say %v, internal/help/topics/exit-codes.md documents %v", consts, documented)
	}
}

// TestHelpListsEveryExitCode: pickup's own help lists each code of the
// exit-codes topic (it stopped at 7 once, without 8 and 130).
func TestHelpListsEveryExitCode(t *testing.T) {
	desc := appDescription(nil, []string{"pickup", "help"})
	for _, c := range help.ExitCodes() {
		if !strings.Contains(desc, "\n   "+strconv.Itoa(c.Code)+" ") {
			t.Errorf("pickup help does not list exit code %d:\n%s", c.Code, desc)
		}
	}
	for _, tp := range help.Topics() {
		if !regexp.MustCompile(`[ ,]` + regexp.QuoteMeta(tp.Name) + `(,|\n|$)`).MatchString(desc) {
			t.Errorf("pickup help does not name the topic %s:\n%s", tp.Name, desc)
		}
	}
	if d := appDescription(nil, []string{"pickup", "next"}); d != "" {
		t.Errorf("a run of next builds pickup's help text: %q", d)
	}
}

// The help text reads every topic: only a run that may print it builds it,
// so that pickup --version (pickup's start-up, as benchmarked) does not.
func TestAppDescriptionOnlyWhenHelpMayPrint(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		built bool
	}{
		{[]string{"pickup"}, true},
		{[]string{"pickup", "--help"}, true},
		{[]string{"pickup", "help"}, true},
		{[]string{"pickup", "-v", "--help"}, true},
		{[]string{"pickup", "--version"}, false},
		{[]string{"pickup", "-v"}, false},
		{[]string{"pickup", "list"}, false},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			if got := appDescription(nil, tc.args) != ""; got != tc.built {
				t.Errorf("appDescription(%q) built = %v, want %v", tc.args, got, tc.built)
			}
		})
	}
}
