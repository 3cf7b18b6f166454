// Command apicount counts the exported identifiers of Go packages: the
// exported top-level names (types, functions, variables, constants) plus the
// exported methods of every type, without struct fields or interface
// methods. Test files are left out. It measures how much public API the
// library packages (claim, sessions) promise to Go users:
//
//	go run ./internal/cmd/apicount ./claim ./sessions
//
// With -v it lists the names, one a line, for diffing before and after.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	verbose := flag.Bool("v", false, "list every exported identifier")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: apicount [-v] DIR...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	total := 0
	for _, dir := range flag.Args() {
		names, err := exported(dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "apicount: error: %v\n", err)
			os.Exit(1)
		}
		if *verbose {
			for _, n := range names {
				fmt.Printf("%s\t%s\n", filepath.Base(dir), n)
			}
		}
		fmt.Printf("%s %d\n", dir, len(names))
		total += len(names)
	}
	if flag.NArg() > 1 {
		fmt.Printf("total %d\n", total)
	}
}

// exported returns the sorted exported identifiers of the package in dir
// (all build tags: a name exported on any platform counts once).
func exported(dir string) ([]string, error) {
	fset := token.NewFileSet()
	keep := func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }
	pkgs, err := parser.ParseDir(fset, dir, keep, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", dir, err)
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("parse %s: no Go package there", dir)
	}
	seen := map[string]bool{}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				for _, n := range declNames(d) {
					seen[n] = true
				}
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

func declNames(d ast.Decl) []string {
	var out []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			return nil
		}
		if d.Recv == nil || len(d.Recv.List) == 0 {
			return []string{d.Name.Name}
		}
		recv := receiverName(d.Recv.List[0].Type)
		if recv == "" || !ast.IsExported(recv) {
			return nil // a method of an unexported type is reachable only through an interface
		}
		return []string{recv + "." + d.Name.Name}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() {
					out = append(out, s.Name.Name)
				}
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if n.IsExported() {
						out = append(out, n.Name)
					}
				}
			}
		}
	}
	return out
}

func receiverName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}
