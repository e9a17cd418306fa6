package sonic

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/profile"
)

func TestEncodeHashMatchesEncodingJSON(t *testing.T) {
	tests := []map[string]string{
		{},
		{"b": "2", "a": "1", "pfc_enable": "3,4"},
		{`q"uote`: `back\slash`, "ctl": "a\tb\n\r\b\f\x01", "html": "<&>", "utf8": "µs ✓"},
	}
	for _, fields := range tests {
		want, err := json.Marshal(fields)
		if err != nil {
			t.Fatal(err)
		}
		if got := encodeHash(fromMap(fields)); string(got) != string(want) {
			t.Errorf("encodeHash(%q) = %s, want %s", fields, got, want)
		}
	}
}

func TestQuirks(t *testing.T) {
	q := Platform{}.Quirks()
	if !q.PFC || q.Origin != Origin || q.WatchdogMin != 100 || q.WatchdogMax != 5000 {
		t.Errorf("Quirks() = %+v, want PFC, origin %s, watchdog 100..5000 ms", q, Origin)
	}
}

// Issue 10 item 8: the WRED profile marks ECT packets and drops nothing
// (orchagent qosorch.cpp: wred_<colour>_enable is SAI_WRED_ATTR_<COLOUR>_ENABLE,
// the colour's WRED drop; ecn is SAI_WRED_ATTR_ECN_MARK_MODE).
func TestWREDMarksOnly(t *testing.T) {
	f := &intent.Fabric{Name: "t", Policy: intent.Policy{
		Classes: []intent.Class{
			{Name: "default", Priority: 0, Weight: 50, Default: true},
			{Name: "roce", DSCP: []int{26}, Priority: 3, Lossless: true, Weight: 50, ECN: &intent.ECN{MinBytes: 150000, MaxBytes: 1500000, Probability: 100}},
		},
		MTU: 9216,
	}}
	f.Switches = []intent.Switch{{Name: "leaf1", Platform: intent.PlatformSONiC, Ports: []intent.Port{{Name: "Ethernet0", Speed: 100e9, CableMeters: 3}}}}
	d, err := Platform{}.Compile(f, &f.Switches[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range d.Replaces {
		el := u.GetPath().GetElem()
		if el[2].GetName() != "WRED_PROFILE" {
			continue
		}
		var h map[string]string
		if err := json.Unmarshal(u.GetVal().GetJsonIetfVal(), &h); err != nil {
			t.Fatal(err)
		}
		if h["ecn"] != "ecn_all" {
			t.Errorf("WRED_PROFILE|%s ecn = %q, want ecn_all", el[3].GetName(), h["ecn"])
		}
		for _, c := range []string{"green", "yellow", "red"} {
			if h["wred_"+c+"_enable"] != "false" {
				t.Errorf("WRED_PROFILE|%s wred_%s_enable = %q: WRED drop on, non-ECT packets of a lossless queue can be dropped", el[3].GetName(), c, h["wred_"+c+"_enable"])
			}
		}
		return
	}
	t.Fatal("no WRED_PROFILE compiled")
}

// bufferProfiles compiles f for its first switch and returns the
// FABRICCTL_PG profiles and the notes.
func bufferProfiles(t *testing.T, f *intent.Fabric) (map[string]map[string]string, []string) {
	t.Helper()
	d, err := Platform{}.Compile(f, &f.Switches[0])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, u := range d.Replaces {
		el := u.GetPath().GetElem()
		if el[2].GetName() != "BUFFER_PROFILE" {
			continue
		}
		var h map[string]string
		if err := json.Unmarshal(u.GetVal().GetJsonIetfVal(), &h); err != nil {
			t.Fatal(err)
		}
		out[el[3].GetName()] = h
	}
	return out, d.Notes
}

func asicFabric(asic string) *intent.Fabric {
	f := &intent.Fabric{Name: "t", Policy: intent.Policy{
		Classes: []intent.Class{
			{Name: "default", Priority: 0, Weight: 50, Default: true},
			{Name: "roce", DSCP: []int{26}, Priority: 3, Lossless: true, Weight: 50},
		},
		MTU: 9216,
	}}
	f.Switches = []intent.Switch{{Name: "leaf1", Platform: intent.PlatformSONiC, ASIC: asic,
		Ports: []intent.Port{{Name: "Ethernet0", Speed: 400e9, CableMeters: 5}}}}
	return f
}

// Issue 10 item 15: on a Tomahawk 4 the compiled xoff is at least the
// vendor's validated 307,848 B for 400G/5 m (sonic-buildimage
// device/nokia/x86_64-nokia_ixr7220_h4-r0/Nokia-IXR7220-H4-64D/pg_profile_lookup.ini),
// about twice the published models'.
func TestCompileHeadroomUsesVendorTable(t *testing.T) {
	profs, _ := bufferProfiles(t, asicFabric("tomahawk4"))
	for name, h := range profs {
		x, _ := strconv.ParseInt(h["xoff"], 10, 64)
		if x < 307848 {
			t.Errorf("%s xoff %d on tomahawk4 400G/5m, want >= 307848 (the vendor's table)", name, x)
		}
	}
	if len(profs) == 0 {
		t.Fatal("no buffer profile")
	}
}

// The platform's cell factor reaches the SONiC model: on the default SONiC
// profile (ACS-MSN3800, Spectrum-2, cell 144 B: factor 3 by
// buffer_headroom_mellanox.lua) the xoff is above the cell-factor-1 figure.
func TestCompileHeadroomPassesCellFactor(t *testing.T) {
	f := asicFabric("")
	profs, _ := bufferProfiles(t, f)
	in := intent.HeadroomInput{Speed: 400e9, CableMeters: 5, MTU: 9216, CellFactor: 3}
	want := intent.HeadroomSONiC(in).Bytes
	for name, h := range profs {
		x, _ := strconv.ParseInt(h["xoff"], 10, 64)
		if x < want {
			t.Errorf("%s xoff %d, want >= %d (SONiC model with Spectrum-2's cell factor 3)", name, x, want)
		}
	}
}

// Issue 10 item 5: BUFFER_PROFILE size is xon + xoff on Mellanox (the
// headroom) and the guaranteed minimum on Broadcom (sonic-swss
// orchagent/bufferorch.cpp: size -> SAI_BUFFER_PROFILE_ATTR_BUFFER_SIZE),
// where the vendor's table gives it; the reading is noted.
func TestCompileBufferSizePerASIC(t *testing.T) {
	for _, tt := range []struct {
		asic     string
		wantSize func(h map[string]string) string
		note     string
	}{
		{"spectrum2", func(h map[string]string) string { return sum(h["xon"], h["xoff"]) }, "size = xon + xoff"},
		{"tomahawk4", func(map[string]string) string { return "1248" }, "guaranteed minimum"},
		{"trident3", func(h map[string]string) string { return sum(h["xon"], h["xoff"]) }, "no vendor table"},
	} {
		profs, notes := bufferProfiles(t, asicFabric(tt.asic))
		for name, h := range profs {
			if want := tt.wantSize(h); h["size"] != want {
				t.Errorf("%s: %s size %s, want %s", tt.asic, name, h["size"], want)
			}
		}
		if !hasNote(notes, tt.note) {
			t.Errorf("%s: notes %q do not say %q", tt.asic, notes, tt.note)
		}
	}
}

func sum(a, b string) string {
	x, _ := strconv.ParseInt(a, 10, 64)
	y, _ := strconv.ParseInt(b, 10, 64)
	return strconv.FormatInt(x+y, 10)
}

func hasNote(notes []string, s string) bool {
	for _, n := range notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// render (compile alone) says that on a release whose config updater
// refuses fabricctl's buffer and WRED profiles, plan writes the template's
// own instead; plan drops the note (TestSONiCGCUOwnedProfilesLeftInPlace).
func TestRenderSaysPlanRewritesForGCU(t *testing.T) {
	for _, prof := range []string{"", "sonic-202405", "sonic-202411"} {
		f := asicFabric("")
		f.Switches[0].Profile = prof
		_, notes := bufferProfiles(t, f)
		found := false
		for _, n := range notes {
			if strings.HasPrefix(n, renderGCUNote) && strings.Contains(n, "config updater refuses to create buffer and WRED profiles") {
				found = true
			}
		}
		if !found {
			t.Errorf("profile %q: no note that plan rewrites the payload: %q", prof, notes)
		}
	}
}

// The planner's flapTables (what plan says a Set flaps) and every SONiC
// profile's Write.PortCriticalTables (what the twin counts as a flap) are
// one fact: patch_sorter.py's RequiredValueIdentifier patterns.
func TestFlapTablesAreTheProfilesPortCriticalTables(t *testing.T) {
	for _, name := range profile.Names(string(intent.PlatformSONiC)) {
		p, err := profile.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		got := slices.Sorted(maps.Keys(flapTables))
		want := slices.Sorted(slices.Values(p.Write.PortCriticalTables))
		if !slices.Equal(got, want) {
			t.Errorf("%s: flapTables %v, profile portCriticalTables %v", name, got, want)
		}
	}
}

// sonic-gnmi 202505+ (gnmi_server/server.go authenticate, aa547ad2, PR
// #335): a client authenticated by certificate without the role
// gnmi_config_db_readwrite is refused with these texts (a plain error:
// gRPC Unknown). The twins do not model certificate roles; the texts are
// the source's.
func TestExplainWriteAccessRefusal(t *testing.T) {
	for _, msg := range []string{
		"fabricctl does not have write access, target gnmi_config_db",
		"fabricctl does not have access, target gnmi_config_db, role gnmi_config_db_readonly",
	} {
		err := Platform{}.ExplainSetError(status.Error(codes.Unknown, msg))
		if !errors.Is(err, ErrNoWriteRole) || !strings.Contains(err.Error(), "gnmi_config_db_readwrite") || !strings.Contains(err.Error(), msg) {
			t.Errorf("ExplainSetError(%q) = %v", msg, err)
		}
	}
	other := status.Error(codes.Unknown, "Invalid entry map[]")
	if err := (Platform{}).ExplainSetError(other); err != other {
		t.Errorf("ExplainSetError changed an unrelated error: %v", err)
	}
}

// profile.SONiCRelease: the branch a build_version names (sonic-buildimage
// functions.sh sonic_get_version: <branch>.<build number>-<commit> or a
// tag; builds versioned by branch date: 20241110.12).
func TestReleaseOfBuildVersion(t *testing.T) {
	for bv, want := range map[string]string{
		"202411.0-3f2a1b9c":         "202411",
		"202511.17-dirty-20260101":  "202511",
		"20241110.12":               "202411",
		"master.1234-abcdef":        "",
		"private_branch.0-deadbeef": "",
		"":                          "",
	} {
		if got := profile.SONiCRelease(bv); got != want {
			t.Errorf("SONiCRelease(%q) = %q, want %q", bv, got, want)
		}
	}
}

// buildVersion reads sonic-gnmi's getBuildVersion JSON and says why when
// it cannot: the version file unread ("sonic.NA" with an error), an answer
// of another shape, none.
func TestBuildVersionAnswers(t *testing.T) {
	note := func(js string) []*gnmipb.Notification {
		return []*gnmipb.Notification{{Update: []*gnmipb.Update{{Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(js)}}}}}}
	}
	for _, tt := range []struct {
		notes     []*gnmipb.Notification
		want, why string
	}{
		{note(`{"build_version":"SONiC.202411.5-abc","error":""}`), "202411.5-abc", ""},
		{note(`{"build_version":"sonic.NA","error":"open /etc/sonic/sonic_version.yml: no such file or directory"}`), "", "could not read /etc/sonic/sonic_version.yml"},
		{note(`{"build_version":"sonic.NA","error":""}`), "", "has no build_version"},
		{note(`"202411"`), "", "is not an object"},
		{note(`{`), "", "OTHERS /osversion/build: "},
		{[]*gnmipb.Notification{{}}, "", "no value"},
	} {
		got, why := buildVersion(tt.notes)
		if got != tt.want || !strings.Contains(why, tt.why) || (tt.why == "") != (why == "") {
			t.Errorf("buildVersion(%v) = %q, %q; want %q, %q", tt.notes, got, why, tt.want, tt.why)
		}
	}
}
