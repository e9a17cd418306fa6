// Command testsummary reads `go test -json` events on stdin, prints what a
// plain `go test` prints (the ok/FAIL line of each package, the output of
// failed tests, build errors) and ends with every skipped test and its
// reason, then one line: N passed, N failed, N skipped. A tool or file a
// test needs and CI lacks is then visible instead of a silent skip.
//
//	go test -json ./... | go run ./scripts/testsummary
//
// It exits 1 when a test or package failed (or the stream had no events),
// else 0.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

type key struct{ pkg, test string }

type skip struct {
	key
	reason string
}

type summary struct {
	passed, failed, skipped int
	pkgFailed               bool
	events                  int
	skips                   []skip
	out                     map[key][]string // output of running tests
}

func main() {
	s, err := run(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
	if s.failed > 0 || s.pkgFailed || s.events == 0 {
		os.Exit(1)
	}
}

func run(r io.Reader, w io.Writer) (*summary, error) {
	s := &summary{out: map[key][]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			fmt.Fprintf(w, "%s\n", line) // build output that is not JSON
			continue
		}
		s.events++
		s.add(ev, w)
	}
	if err := sc.Err(); err != nil {
		return s, err
	}
	s.finish(w)
	return s, nil
}

func (s *summary) add(ev event, w io.Writer) {
	k := key{ev.Package, ev.Test}
	switch ev.Action {
	case "output":
		if ev.Test == "" {
			// Package lines: ok, FAIL, "?   pkg [no test files]", build
			// errors, panics outside a test; but not the -v framing.
			if !strings.HasPrefix(ev.Output, "=== ") && !strings.HasPrefix(ev.Output, "PASS\n") {
				fmt.Fprint(w, ev.Output)
			}
			return
		}
		s.out[k] = append(s.out[k], ev.Output)
	case "pass":
		if ev.Test != "" {
			s.passed++
			delete(s.out, k)
		}
	case "fail":
		if ev.Test == "" {
			s.pkgFailed = true
			return
		}
		s.failed++
		for _, l := range s.out[k] {
			if !strings.HasPrefix(l, "=== ") {
				fmt.Fprint(w, l)
			}
		}
		delete(s.out, k)
	case "skip":
		if ev.Test == "" {
			return // a package without tests
		}
		s.skipped++
		s.skips = append(s.skips, skip{k, reason(s.out[k])})
		delete(s.out, k)
	}
}

// reason is what a skipped test logged (t.Skip's message), without the
// framing lines.
func reason(lines []string) string {
	var parts []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}

func (s *summary) finish(w io.Writer) {
	if len(s.skips) > 0 {
		sort.SliceStable(s.skips, func(i, j int) bool {
			if s.skips[i].pkg != s.skips[j].pkg {
				return s.skips[i].pkg < s.skips[j].pkg
			}
			return s.skips[i].test < s.skips[j].test
		})
		fmt.Fprintf(w, "\nSkipped tests (%d):\n", len(s.skips))
		for _, sk := range s.skips {
			fmt.Fprintf(w, "  %s %s: %s\n", sk.pkg, sk.test, sk.reason)
		}
	}
	fmt.Fprintf(w, "\n%d passed, %d failed, %d skipped\n", s.passed, s.failed, s.skipped)
}
