package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/intent/check"
)

// TestFindings: an incast across the Clos with the headroom cut and no ECN
// turns into FC150 (drops, at the intent position of the dropping port)
// and FC151 (pause beyond the congested switch); the intent as written
// simulates clean.
func TestFindings(t *testing.T) {
	f := parse(t, closIntent)
	sc, err := ParseSpec("incast:5:1")
	if err != nil {
		t.Fatal(err)
	}
	n, err := Build(f, sc, StarOptions{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := New(n, Options{Duration: 300 * time.Microsecond, NoECN: true, XOFF: 32 << 10, Headroom: 6000}).Run()
	cl := *f.Policy.ClassByName("roce")
	got := map[string]int{}
	for _, fd := range r.findings(n, cl, "incast:5:1") {
		got[fd.ID]++
		t.Logf("%s", fd)
		if fd.ID == RuleDrops && fd.Pos.Line == 0 {
			t.Errorf("FC150 without a position: %s", fd)
		}
	}
	if got[RuleDrops] == 0 || got[RulePause] == 0 {
		t.Errorf("findings %v: want FC150 and FC151", got)
	}
	for _, fd := range Findings(f) {
		if fd.ID == RuleDrops || fd.ID == RuleDeadlock {
			t.Errorf("the intent as written: %s", fd)
		}
	}
}

// TestFindingsBufferTooSmall: a switch buffer below the headroom its ports
// need (what FC112 reports statically) drops in the standard incast (FC150);
// a buffer that holds it does not.
func TestFindingsBufferTooSmall(t *testing.T) {
	const tmpl = `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: t}
policy:
  preset: roce-lossless
inventory:
  switches:
    - name: leaf1
      platform: sonic
      address: 192.0.2.1:8080
      credentials: {usernameEnv: U, passwordEnv: P}
      tls: {insecure: true}
      buffer: BUF
      ports:
        - {name: "Ethernet{0..4..4}", speed: 100G, cable: 3m}
`
	for _, tc := range []struct {
		buf   string
		drops bool
	}{{"40KB", true}, {"4MB", false}} {
		f := parse(t, strings.Replace(tmpl, "BUF", tc.buf, 1))
		got := false
		for _, fd := range Findings(f) {
			if fd.ID == RuleDrops && fd.Severity == check.Error {
				got = true
			}
		}
		if got != tc.drops {
			t.Errorf("buffer %s: FC150 %v, want %v", tc.buf, got, tc.drops)
		}
	}
}
