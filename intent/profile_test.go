package intent_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
)

// switches[].profile defaults to the platform's newest; an unknown name,
// one of another platform, or an unknown asic is an error at file:line that
// lists the known ones.
func TestSwitchProfileAndASIC(t *testing.T) {
	const head = "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\npolicy: {preset: roce-lossless}\ninventory:\n  switches:\n"
	f, err := intent.Parse("t.yaml", []byte(head+
		"    - {name: a, platform: srlinux, address: 'a:1'}\n"+
		"    - {name: b, platform: sonic, address: 'b:1', profile: sonic-202405, asic: spectrum3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Switches[0].Profile != "srlinux-25.3" || f.Switches[1].Profile != "sonic-202405" || f.Switches[1].ASIC != "spectrum3" {
		t.Errorf("profiles = %q %q asic %q", f.Switches[0].Profile, f.Switches[1].Profile, f.Switches[1].ASIC)
	}
	for _, tc := range []struct{ line, want string }{
		{"    - {name: a, platform: srlinux, address: 'a:1', profile: srlinux-23.10}\n", `t.yaml:6:61: inventory.switches[a].profile: unknown profile "srlinux-23.10"; did you mean "srlinux-24.10"? (known: srlinux-24.10, srlinux-25.3)`},
		{"    - {name: a, platform: sonic, address: 'a:1', profile: srlinux-25.3}\n", `profile "srlinux-25.3" is for platform srlinux, not sonic (known for sonic: sonic-202405, sonic-202411, sonic-202505, sonic-202511)`},
		{"    - {name: a, platform: sonic, address: 'a:1', asic: tomahawk9}\n", `t.yaml:6:56: inventory.switches[a].asic: unknown asic "tomahawk9"; did you mean "tomahawk3", "tomahawk4" or "tomahawk5"? (known: spectrum, spectrum2`},
	} {
		_, err := intent.Parse("t.yaml", []byte(head+tc.line))
		var es intent.Errors
		if !errors.As(err, &es) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%s) = %v, want %q", strings.TrimSpace(tc.line), err, tc.want)
		}
	}
}

func TestSchemaListsProfilesAndASICs(t *testing.T) {
	b, err := intent.Schema()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"sonic-202411"`, `"srlinux-24.10"`, `"jericho2"`, `"spectrum4"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("schema lacks %s", want)
		}
	}
}
