package intent_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
)

const limitsHead = `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: limits}
policy: {preset: roce-lossless}
inventory:
  switches:
    - name: leaf1
      platform: srlinux
      address: 127.0.0.1:57400
      portDefaults: {speed: 400G, cable: 3m}
`

// TestPortsPerSwitchLimit: a range that gives one switch more than
// MaxPortsPerSwitch ports is refused by name; exactly the limit is fine.
func TestPortsPerSwitchLimit(t *testing.T) {
	ok := limitsHead + fmt.Sprintf("      ports:\n        - name: ethernet-1/{1..%d}\n", intent.MaxPortsPerSwitch)
	f, err := intent.Parse("ok.yaml", []byte(ok))
	if err != nil {
		t.Fatalf("%d ports: %v", intent.MaxPortsPerSwitch, err)
	}
	if n := len(f.Switches[0].Ports); n != intent.MaxPortsPerSwitch {
		t.Fatalf("got %d ports", n)
	}
	bad := limitsHead + "      ports:\n        - name: ethernet-1/{1..100000}\n"
	_, err = intent.Parse("bad.yaml", []byte(bad))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("a switch has at most %d", intent.MaxPortsPerSwitch)) ||
		!strings.Contains(err.Error(), "bad.yaml:12") {
		t.Errorf("100,000 ports on one switch: %v", err)
	}
}

// TestHugeKeyIsClipped: a switch name (the key of its entry) of 299 KB
// is quoted by its start and length in errors, not in full.
func TestHugeKeyIsClipped(t *testing.T) {
	key := strings.Repeat("k", 299<<10)
	doc := strings.Replace(strings.Replace(limitsHead, "name: leaf1", "name: "+key, 1), "127.0.0.1:57400", "no-port", 1)
	_, err := intent.Parse("key.yaml", []byte(doc))
	if err == nil {
		t.Fatal("no error for an unknown key")
	}
	if len(err.Error()) > 1000 {
		t.Errorf("error is %d bytes long", len(err.Error()))
	}
	// The path names the entry by its index (entryName: names of 80 bytes
	// and more are not used in paths); any quoted copy is clipped with its
	// length.
	if strings.Contains(err.Error(), strings.Repeat("k", 200)) && !strings.Contains(err.Error(), fmt.Sprintf("(%d bytes)", len(key))) {
		t.Errorf("error quotes the key unclipped: %.300s", err.Error())
	}
	if !strings.Contains(err.Error(), "inventory.switches[0]") {
		t.Errorf("error does not name the entry by its index: %.300s", err.Error())
	}
}

// TestOmittedIsNotAnError: the "... and N more errors not shown" entry is
// marked Omitted and the count in the message is the real one.
func TestOmittedIsNotAnError(t *testing.T) {
	var b strings.Builder
	b.WriteString(limitsHead)
	for i := range 300 {
		fmt.Fprintf(&b, "      unknown%d: 1\n", i)
	}
	_, err := intent.Parse("many.yaml", []byte(b.String()))
	var es intent.Errors
	if !errors.As(err, &es) {
		t.Fatalf("error %T %v", err, err)
	}
	last := es[len(es)-1]
	if last.Omitted == 0 || !strings.Contains(last.Msg, "more errors not shown") {
		t.Fatalf("last entry %+v, want the omitted summary", last)
	}
	real := len(es) - 1 + last.Omitted
	if !strings.HasPrefix(err.Error(), fmt.Sprintf("%d errors in intent:", real)) {
		t.Errorf("header %q, want %d errors", strings.SplitN(err.Error(), "\n", 2)[0], real)
	}
}
