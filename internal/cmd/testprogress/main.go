// Command testprogress turns `go test -json` into what a person waiting for
// the suite wants to see: one line per package as it finishes, with its
// time; while packages are still running, a short line every 30 s naming
// them and how long each has run; and, for every failure, the full output of
// the failing test (or of the package, when it failed outside any test, as a
// build error, a panic or a timeout does). scripts/test runs the suite
// through it:
//
//	go test -json ./... | go run ./internal/cmd/testprogress
//
// It exits 0 whatever the tests did (the pipeline's status is go test's:
// scripts/test sets pipefail), and 1 only if it could not read its input.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	every := flag.Duration("every", 30*time.Second, "how often to name the packages still running")
	flag.Parse()
	f := newFilter(os.Stdout, time.Now)
	if err := run(f, os.Stdin, *every); err != nil {
		fmt.Fprintf(os.Stderr, "testprogress: %v\n", err)
		os.Exit(1)
	}
}

// run feeds the lines of in to f, and calls f.tick every interval while it
// waits for them.
func run(f *filter, in io.Reader, every time.Duration) error {
	lines := make(chan []byte)
	errc := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), 16<<20) // a test may print long lines
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		errc <- sc.Err()
		close(lines)
	}()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				f.finish()
				return <-errc
			}
			f.line(line)
		case <-t.C:
			f.tick()
		}
	}
}
