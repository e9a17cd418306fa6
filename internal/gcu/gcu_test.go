package gcu_test

import (
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/internal/gcu"
	"github.com/fabricctl/fabricctl/internal/profile"
)

func validators(t *testing.T, name string) *gcu.Validators {
	t.Helper()
	p, err := profile.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	if p.Write.GCU == nil {
		t.Fatalf("profile %s has no write.gcu", name)
	}
	return p.Write.GCU
}

func op(o, ptr string, v any) gcu.Op {
	return gcu.Op{Op: o, Path: strings.Split(strings.TrimPrefix(ptr, "/"), "/"), Value: v}
}

// The rows of sonic-utilities' own unit tests of rdma_config_update_validator
// (tests/generic_config_updater/field_operation_validator_test.py, branch
// 202411), with the same ASIC and build_version ("SONiC.20220530": branch
// 20220530), must get the same verdicts here; the rest are the cases
// fabricctl's payloads raise, worked by hand from field_operation_validators.py.
func TestRDMAValidatorAsSONiCsUnitTests(t *testing.T) {
	v := validators(t, "sonic-202411")
	for _, tt := range []struct {
		name   string
		asic   string
		branch string
		op     gcu.Op
		ok     bool
	}{
		{"unknown_asic", gcu.Unknown, "", op("replace", "/PFC_WD/Ethernet4/restoration_time", "234234"), false},
		{"td3_asic_invalid_version", "td3", "20220530", op("replace", "/BUFFER_POOL/ingress_lossless_pool/xoff", "234234"), false},
		{"spc_asic_valid_version_remove", "spc1", "20220530", op("remove", "/PFC_WD/Ethernet8/detection_time", nil), true},
		{"spc_asic_valid_version_add_pfcwd", "spc1", "20220530", op("add", "/PFC_WD/Ethernet8", map[string]any{"action": "drop", "detection_time": "300", "restoration_time": "200"}), true},
		{"spc_asic_valid_version", "spc1", "20220530", op("remove", "/PFC_WD/Ethernet8", nil), true},
		{"spc_asic_invalid_op", "spc1", "20220530", op("remove", "/BUFFER_POOL/ingress_lossless_pool/xoff", nil), false},
		{"spc_asic_other_field", "spc1", "20220530", op("add", "/PFC_WD/Ethernet8/other_field", "sample_value"), false},
		// fabricctl's cases.
		{"new buffer profile (pool, size, xon in no scenario)", "spc2", "", op("add", "/BUFFER_PROFILE/FABRICCTL_PG_149787", map[string]any{"pool": "ingress_lossless_pool", "xoff": "1", "xon": "2", "size": "3", "dynamic_th": "0"}), false},
		{"xoff of the lossless profile", "spc2", "", op("replace", "/BUFFER_PROFILE/pg_lossless_100000_5m_profile/xoff", "60000"), true},
		{"xoff on td2 (no version)", "td2", "", op("replace", "/BUFFER_PROFILE/pg_lossless_100000_5m_profile/xoff", "60000"), false},
		{"size of the lossless profile", "spc2", "", op("replace", "/BUFFER_PROFILE/pg_lossless_100000_5m_profile/size", "80000"), false},
		{"AZURE_LOSSLESS green min", "spc2", "", op("replace", "/WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold", "150000"), true},
		{"AZURE_LOSSLESS drop off", "spc2", "", op("replace", "/WRED_PROFILE/AZURE_LOSSLESS/wred_green_enable", "false"), false},
		{"new WRED profile", "spc2", "", op("add", "/WRED_PROFILE/FABRICCTL_ECN_ROCE", map[string]any{"green_min_threshold": "1"}), false},
		{"PFC_WD GLOBAL created", "spc2", "", op("add", "/PFC_WD/GLOBAL", map[string]any{"POLL_INTERVAL": "200"}), false},
		{"PFC_WD GLOBAL poll interval", "spc2", "", op("replace", "/PFC_WD/GLOBAL/POLL_INTERVAL", "200"), true},
		{"PFC_WD port entry on a 202411 ASIC", "th4", "", op("add", "/PFC_WD/Ethernet0", map[string]any{"action": "drop", "detection_time": "200", "restoration_time": "200"}), true},
	} {
		r := v.Check([]gcu.Op{tt.op}, tt.asic, tt.branch)
		if got := r == nil; got != tt.ok {
			t.Errorf("%s: %s %s on %s: allowed %v, want %v (%v)", tt.name, tt.op.Op, tt.op.Pointer(), tt.asic, got, tt.ok, r)
		}
		if r != nil && !strings.Contains(r.Text, "Modification of "+tt.op.Path[0]+" table is illegal- validating function generic_config_updater.field_operation_validators.rdma_config_update_validator returned False") {
			t.Errorf("%s: refusal text %q is not GCU's", tt.name, r.Text)
		}
	}
}

// gu_common.py refuses removing /PFC_WD/GLOBAL (and its POLL_INTERVAL)
// before any validator runs.
func TestIllegalRemoves(t *testing.T) {
	v := validators(t, "sonic-202405")
	r := v.Check([]gcu.Op{op("remove", "/PFC_WD/GLOBAL", nil)}, "spc2", "")
	if r == nil || r.Text != "Given patch operation is invalid. Operation: remove is illegal on field: /PFC_WD/GLOBAL" {
		t.Errorf("remove /PFC_WD/GLOBAL: %v", r)
	}
}

// get_asic_name: Mellanox SKUs by exact, case-insensitive name; Broadcom
// SKUs by substring; anything else unknown.
func TestASICOfHWSKU(t *testing.T) {
	v := validators(t, "sonic-202411")
	for sku, want := range map[string]string{
		"ACS-MSN3800":              "spc2",
		"acs-msn3800":              "spc2",
		"ACS-MSN3800-extra":        gcu.Unknown,
		"Nokia-IXR7220-H4-64D":     "th4",
		"Arista-7060X6-64PE-C256":  "th5",
		"Arista-7050CX3-32S-C32":   "td3",
		"Accton-AS9716-32D":        gcu.Unknown,
		"Mellanox-SN5600-C256S1":   "spc4",
		"Force10-S6000-Q24S32-XYZ": "td2",
	} {
		if got := v.ASIC(sku); got != want {
			t.Errorf("ASIC(%q) = %s, want %s", sku, got, want)
		}
	}
}

// Diff is jsonpatch.from_diff on CONFIG_DB's shape: new tables and keys
// are one add of the whole value, changed fields one replace each.
func TestDiff(t *testing.T) {
	old := map[string]any{
		"BUFFER_PROFILE": map[string]any{"p1": map[string]any{"xoff": "1", "size": "2"}},
		"PFC_WD":         map[string]any{"Ethernet0": map[string]any{"action": "drop"}},
		"PORT":           map[string]any{"Ethernet0": map[string]any{"mtu": "9100"}},
	}
	target := map[string]any{
		"BUFFER_PROFILE": map[string]any{"p1": map[string]any{"xoff": "5", "size": "2"}, "p2": map[string]any{"xoff": "1"}},
		"WRED_PROFILE":   map[string]any{"W": map[string]any{"ecn": "ecn_all"}},
		"PORT":           map[string]any{"Ethernet0": map[string]any{"mtu": "4200"}},
	}
	var got []string
	for _, o := range gcu.Diff(old, target, map[string]bool{"BUFFER_PROFILE": true, "PFC_WD": true, "WRED_PROFILE": true}) {
		got = append(got, o.Op+" "+o.Pointer())
	}
	want := "replace /BUFFER_PROFILE/p1/xoff,add /BUFFER_PROFILE/p2,remove /PFC_WD,add /WRED_PROFILE"
	if strings.Join(got, ",") != want {
		t.Errorf("Diff = %q, want %q", strings.Join(got, ","), want)
	}
}

// The validators of later branches, against the rows of sonic-utilities'
// own unit tests there (tests/generic_config_updater/
// field_operation_validator_test.py, branch 202511:
// test_buffer_profile_config_update_validator*,
// test_validate_field_operation_illegal__buffer_pool,
// test_validate_field_operation_wred_profile_replace/_add), and the cases
// fabricctl's payloads raise, worked by hand from field_operation_validators.py
// of each branch.
func TestLaterValidatorsAsSONiCsUnitTests(t *testing.T) {
	lossless := map[string]any{"pool": "ingress_lossless_pool", "xoff": "1", "xon": "2", "size": "3", "dynamic_th": "0"}
	ecn := map[string]any{"ecn": "ecn_all", "wred_green_enable": "true", "green_min_threshold": "1", "green_max_threshold": "2", "green_drop_probability": "5"}
	for _, tt := range []struct {
		profile, name, asic, branch string
		op                          gcu.Op
		ok                          bool
	}{
		// 202511: buffer_profile_config_update_validator.
		{"sonic-202511", "packet_discard_action add on spc4", "spc4", "20241200", op("add", "/BUFFER_PROFILE/sample_profile/packet_discard_action", "trim"), true},
		{"sonic-202511", "packet_discard_action replace on th5", "th5", "20241200", op("replace", "/BUFFER_PROFILE/sample_profile/packet_discard_action", "drop"), true},
		{"sonic-202511", "object-level remove, no ASIC asked", gcu.Unknown, "", op("remove", "/BUFFER_PROFILE/pg_lossless_40000_5m_profile", nil), true},
		{"sonic-202511", "object-level add", gcu.Unknown, "", op("add", "/BUFFER_PROFILE/new_profile", map[string]any{"size": "1024", "pool": "ingress_lossless_pool"}), true},
		{"sonic-202511", "object-level move", "spc2", "", gcu.Op{Op: "move", Path: []string{"BUFFER_PROFILE", "my_profile"}}, false},
		{"sonic-202511", "BUFFER_POOL xoff (no field listed)", "spc1", "20220530", op("replace", "/BUFFER_POOL/ingress_lossless_pool/xoff", "2000"), false},
		{"sonic-202511", "WRED wred_green_enable replace (no validator)", "spc2", "", op("replace", "/WRED_PROFILE/AZURE_LOSSY/wred_green_enable", "true"), true},
		{"sonic-202511", "WRED field add", gcu.Unknown, "", op("add", "/WRED_PROFILE/AZURE_LOSSY/red_min_threshold", "3200"), true},
		{"sonic-202511", "pfc_stat_history", "spc2", "", op("add", "/PFC_WD/Ethernet0/pfc_stat_history", "enable"), true},
		// fabricctl's cases on 202511.
		{"sonic-202511", "new FABRICCTL buffer profile", "spc2", "", op("add", "/BUFFER_PROFILE/FABRICCTL_PG_149787", lossless), true},
		{"sonic-202511", "new FABRICCTL WRED profile", "spc2", "", op("add", "/WRED_PROFILE/FABRICCTL_ECN_ROCE", ecn), true},
		{"sonic-202511", "xoff of the lossless profile (last element)", "spc2", "", op("replace", "/BUFFER_PROFILE/pg_lossless_100000_5m_profile/xoff", "60000"), true},
		{"sonic-202511", "size of an existing profile", "spc2", "", op("replace", "/BUFFER_PROFILE/FABRICCTL_PG_149787/size", "80000"), false},
		{"sonic-202511", "xoff on td2 (no version)", "td2", "", op("replace", "/BUFFER_PROFILE/pg_lossless_100000_5m_profile/xoff", "60000"), false},
		// 202505: wred_profile_config_update_validator; BUFFER_PROFILE as 202411.
		{"sonic-202505", "green min of any WRED profile", "spc2", "", op("replace", "/WRED_PROFILE/FABRICCTL_ECN_ROCE/green_min_threshold", "150000"), true},
		{"sonic-202505", "green min of AZURE_LOSSLESS", "spc2", "", op("replace", "/WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold", "150000"), true},
		{"sonic-202505", "green min added (add is not an operation of it)", "spc2", "", op("add", "/WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold", "150000"), false},
		{"sonic-202505", "wred_green_enable", "spc2", "", op("replace", "/WRED_PROFILE/AZURE_LOSSLESS/wred_green_enable", "false"), false},
		{"sonic-202505", "new WRED profile", "spc2", "", op("add", "/WRED_PROFILE/FABRICCTL_ECN_ROCE", ecn), false},
		{"sonic-202505", "WRED on an unknown ASIC", gcu.Unknown, "", op("replace", "/WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold", "150000"), false},
		{"sonic-202505", "new buffer profile", "spc2", "", op("add", "/BUFFER_PROFILE/FABRICCTL_PG_149787", lossless), false},
		{"sonic-202505", "xoff, port element dropped", "spc2", "", op("replace", "/BUFFER_PROFILE/pg_lossless_100000_5m_profile/xoff", "60000"), true},
		{"sonic-202505", "WRED green min on spc5 before its branch", "spc5", "20241100", op("replace", "/WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold", "1"), false},
		{"sonic-202505", "WRED green min on spc5 at its branch", "spc5", "20241200", op("replace", "/WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold", "1"), true},
	} {
		t.Run(tt.profile+"/"+tt.name, func(t *testing.T) {
			r := validators(t, tt.profile).Check([]gcu.Op{tt.op}, tt.asic, tt.branch)
			if (r == nil) != tt.ok {
				t.Errorf("%s %s: refusal %v, want allowed=%v", tt.op.Op, tt.op.Pointer(), r, tt.ok)
			}
		})
	}
	// The refusal names the table's own validator, as GCU's does.
	r := validators(t, "sonic-202505").Check([]gcu.Op{op("add", "/WRED_PROFILE/X", map[string]any{"ecn": "ecn_all"})}, "spc2", "")
	if r == nil || !strings.HasSuffix(r.Text, "validating function generic_config_updater.field_operation_validators.wred_profile_config_update_validator returned False") {
		t.Errorf("refusal text %v", r)
	}
}

// GCU names a Broadcom ASIC by the first family, in its file's order, with
// a SKU contained in the HWSKU; ASIC walks the families sorted. The two
// agree when no listed SKU of one family holds one of another.
func TestBroadcomSKUsDoNotOverlap(t *testing.T) {
	for _, name := range []string{"sonic-202405", "sonic-202411", "sonic-202505", "sonic-202511"} {
		v := validators(t, name)
		for fa, as := range v.BroadcomSKUs {
			for fb, bs := range v.BroadcomSKUs {
				if fa == fb {
					continue
				}
				for _, a := range as {
					for _, b := range bs {
						if strings.Contains(strings.ToLower(a), strings.ToLower(b)) {
							t.Errorf("%s: %s SKU %s holds %s SKU %s", name, fa, a, fb, b)
						}
					}
				}
			}
		}
	}
}

// Branch reads build_version as field_operation_validators.py does: the
// last "."-separated part of exactly 8 digits.
func TestBranchOfBuildVersion(t *testing.T) {
	for bv, want := range map[string]string{
		"20220530":              "20220530", // sonic-utilities' own unit tests' "SONiC.20220530"
		"SONiC.20220530":        "20220530",
		"20241110.12":           "20241110",
		"202411.0-3f2a1b9c":     "", // a community build of branch 202411
		"master.123-dirty-2024": "",
		"20241110.20250101":     "20250101", // the last wins
		"2024111":               "",
		"":                      "",
	} {
		if got := gcu.Branch(bv); got != want {
			t.Errorf("Branch(%q) = %q, want %q", bv, got, want)
		}
	}
}
