package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestExportedCountsNamesAndMethodsNotFields(t *testing.T) {
	dir := t.TempDir()
	src := `package p

type T struct{ Field int; hidden int }
type u struct{}
func (T) M()       {}
func (*T) N()      {}
func (T) m()       {}
func (u) Hidden()  {}
func F()           {}
func f()           {}
var V, w = 1, 2
const C = 3
type I interface{ Method() }
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\nfunc Test() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := exported(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"C", "F", "I", "T", "T.M", "T.N", "V"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("exported = %v, want %v", got, want)
	}
}
