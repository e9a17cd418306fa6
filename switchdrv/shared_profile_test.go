package switchdrv_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
)

// TestSharedBufferProfileCheckAgreesWithPlan (issue 27 item 6): what check
// says of a SONiC 202411 switch whose config updater creates no buffer
// profile (FC132: plan raises xoff of the SKU's shared lossless profile,
// and how many ports outside the inventory share it) is what plan does
// against the SKU's factory CONFIG_DB in the twin: the same xoff, the same
// count of other ports.
func TestSharedBufferProfileCheckAgreesWithPlan(t *testing.T) {
	f := compileFabric(intent.PlatformSONiC, compilePolicy(), 1, 3)
	for i := range f.Switches[0].Ports {
		f.Switches[0].Ports[i].Speed = 100e9 // the ACS-MSN3800's ports
	}
	f.Switches[0].Profile = "sonic-202411"
	_, eng := sonicLabOn(t, f, true, "sonic-202411")
	p, _ := sonicPlan(t, eng, f)
	note := noteWith(p, "lossless buffers: xoff of BUFFER_PROFILE|pg_lossless_100000_5m_profile raised")
	m := regexp.MustCompile(`raised from (\d+) to (\d+) B .*\(and for the (\d+) other port\(s\) outside the inventory`).FindStringSubmatch(note)
	if m == nil {
		t.Fatalf("plan raises no shared xoff: notes %q", p.Targets[0].Notes)
	}
	var fc132 *check.Finding
	fs := check.Run(f, check.Options{})
	for i := range fs {
		if fs[i].ID == "FC132" {
			fc132 = &fs[i]
		}
	}
	if fc132 == nil {
		t.Fatalf("check says nothing of it (plan: %s); findings %v", note, fs)
	}
	comma := func(s string) string {
		var b strings.Builder
		for i, c := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		return b.String()
	}
	want := fmt.Sprintf("from %s B to %s B for the 3 ports of the inventory, and the %s other ports", comma(m[1]), comma(m[2]), m[3])
	if !strings.Contains(fc132.Message, want) {
		t.Errorf("check: %s\nwant %q, as plan says: %s", fc132.Message, want, note)
	}
}
