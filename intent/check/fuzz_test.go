package check

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
)

// FuzzCheck runs every rule on whatever the parser accepts: check must not
// panic or hang on any intent that parses, and every finding must be complete.
// Seeds are the examples (including the broken one).
//
//	go test -run '^$' -fuzz FuzzCheck -fuzztime 60s ./intent/check
func FuzzCheck(f *testing.F) {
	seeds, _ := filepath.Glob("../../examples/*.yaml")
	more, _ := filepath.Glob("../../examples/*/*.yaml")
	for _, p := range append(seeds, more...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(base))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Name ranges ({1..64}) are the parser's to fuzz (FuzzParse): a
		// mutated bound expands to millions of ports and makes each run
		// take seconds, so the rules would hardly be exercised.
		if bytes.Contains(data, []byte("..")) {
			return
		}
		fab, err := intent.Parse("fuzz.yaml", data)
		if err != nil {
			return
		}
		for _, x := range Run(fab, Options{}) {
			if x.ID == "" || x.Message == "" || x.Fix == "" {
				t.Errorf("incomplete finding %+v", x)
			}
		}
	})
}
