package srl

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv"
)

func testFabric(ports ...intent.Port) *intent.Fabric {
	return &intent.Fabric{
		Policy: intent.Policy{
			MTU: 9216,
			Classes: []intent.Class{
				{Name: "default", Priority: 0, Weight: 50, Default: true},
				{Name: "roce", DSCP: []int{26}, Priority: 3, Lossless: true, Weight: 50,
					ECN: &intent.ECN{MinBytes: 150_000, MaxBytes: 1_501_500, Probability: 100}},
				{Name: "cnp", DSCP: []int{48}, Priority: 6, Strict: true, CNP: true},
			},
			Watchdog: intent.Watchdog{Enabled: true, Detect: 200 * time.Millisecond, Restore: 400 * time.Millisecond, Action: intent.WatchdogDrop},
		},
		Switches: []intent.Switch{{Name: "leaf1", Platform: intent.PlatformSRLinux, Ports: ports}},
	}
}

// TestHeadroomProfiles: ports with equal speed, cable and MTU share one
// buffer-allocation profile; each port points at the profile of its own
// headroom, and the headroom is the largest published model's.
func TestHeadroomProfiles(t *testing.T) {
	f := testFabric(
		intent.Port{Name: "ethernet-1/1", Speed: 400e9, CableMeters: 3},
		intent.Port{Name: "ethernet-1/2", Speed: 400e9, CableMeters: 3},
		intent.Port{Name: "ethernet-1/3", Speed: 100e9, CableMeters: 100},
	)
	d, err := Platform{}.Compile(f, &f.Switches[0])
	if err != nil {
		t.Fatal(err)
	}
	profiles := map[string]int64{}
	portProfile := map[string]string{}
	for _, u := range d.Replaces {
		var v map[string]json.RawMessage
		if err := json.Unmarshal(u.GetVal().GetJsonIetfVal(), &v); err != nil {
			t.Fatal(err)
		}
		elems := u.GetPath().GetElem()
		switch last := elems[len(elems)-1]; {
		case last.GetName() == "buffer-allocation-profile":
			var bp bufferProfile
			if err := json.Unmarshal(u.GetVal().GetJsonIetfVal(), &bp); err != nil {
				t.Fatal(err)
			}
			profiles[bp.Name] = bp.Queues.PFCQueue[0].ReservedBytes
		case last.GetName() == "interface" && !strings.Contains(last.GetKey()["interface-id"], "."):
			var qi qosInterface
			if err := json.Unmarshal(u.GetVal().GetJsonIetfVal(), &qi); err != nil {
				t.Fatal(err)
			}
			portProfile[qi.ID] = qi.Input.PFCBufferProfile
		}
	}
	want400 := switchdrv.PortHeadroom(f, f.Switches[0].Ports[0])
	want100 := switchdrv.PortHeadroom(f, f.Switches[0].Ports[2])
	_, req := intent.Headroom(intent.HeadroomInput{Speed: 400e9, CableMeters: 3, MTU: 9216})
	if want400 < req || want400-req >= 1024 {
		t.Errorf("headroom(400G, 3m) = %d, want the largest model %d rounded up to 1 KiB", want400, req)
	}
	wantProfiles := map[string]int64{
		bufferPrefix + itoa64(want400): want400,
		bufferPrefix + itoa64(want100): want100,
	}
	if diff := cmp.Diff(wantProfiles, profiles); diff != "" {
		t.Errorf("buffer profiles mismatch (-want +got):\n%s", diff)
	}
	wantPorts := map[string]string{
		"ethernet-1/1": bufferPrefix + itoa64(want400),
		"ethernet-1/2": bufferPrefix + itoa64(want400),
		"ethernet-1/3": bufferPrefix + itoa64(want100),
	}
	if diff := cmp.Diff(wantPorts, portProfile); diff != "" {
		t.Errorf("port -> profile mismatch (-want +got):\n%s", diff)
	}
}

// TestNoLosslessClass: without lossless classes nothing PFC-related is sent.
func TestNoLosslessClass(t *testing.T) {
	f := testFabric(intent.Port{Name: "ethernet-1/1", Speed: 100e9, CableMeters: 3})
	f.Policy.Classes[1].Lossless = false
	d, err := Platform{}.Compile(f, &f.Switches[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range append(d.Replaces, d.Updates...) {
		s := string(u.GetVal().GetJsonIetfVal())
		for _, e := range u.GetPath().GetElem() {
			s += " " + e.GetName()
		}
		if strings.Contains(s, "pfc") {
			t.Errorf("PFC sent without a lossless class: %s", s)
		}
	}
}

func itoa64(i int64) string { return strconv.FormatInt(i, 10) }
