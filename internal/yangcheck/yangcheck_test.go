package yangcheck

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
)

// testSchemas loads every platform's schema from the default tree (the
// embedded modules unless $FABRICCTL_YANG_DIR overrides them).
func testSchemas(t testing.TB) map[intent.Platform]*Schema {
	t.Helper()
	out := map[intent.Platform]*Schema{}
	for _, p := range intent.Platforms() {
		s, err := Platform(p)
		if err != nil {
			t.Fatalf("load YANG: %v", err)
		}
		out[p] = s
	}
	return out
}

// payloadDir holds one example payload per platform (copied from the
// project's shared reference payloads; see its README.md).
func payloadDir(t testing.TB) string {
	t.Helper()
	return filepath.Join("testdata", "payloads")
}

// sharedPayloads are the example payloads of testdata/payloads and how each
// is addressed (payloads/README.md).
var sharedPayloads = []struct {
	file     string
	platform intent.Platform
	path     *gnmipb.Path
}{
	{"srl_roce.json", intent.PlatformSRLinux, &gnmipb.Path{}},
	{"sonic_configdb.json", intent.PlatformSONiC, &gnmipb.Path{Origin: OriginSONiCDB, Elem: []*gnmipb.PathElem{{Name: "CONFIG_DB"}, {Name: "localhost"}}}},
	{"oc_qos.json", intent.PlatformOpenConfig, &gnmipb.Path{}},
	{"eos_oc_augments.json", intent.PlatformEOS, &gnmipb.Path{}},
}

func TestSharedPayloadsPass(t *testing.T) {
	ss := testSchemas(t)
	dir := payloadDir(t)
	for _, tc := range sharedPayloads {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if got := ss[tc.platform].Validate(tc.path, b); len(got) != 0 {
				for _, v := range got {
					t.Errorf("%s", v)
				}
			}
		})
	}
}

// edit changes one member of a decoded JSON document. Path elements are
// object member names or array indexes; del removes the member instead.
func edit(t *testing.T, doc any, path []string, val any, del bool) {
	t.Helper()
	cur := doc
	for i, p := range path {
		last := i == len(path)-1
		switch x := cur.(type) {
		case map[string]any:
			if last {
				if del {
					delete(x, p)
				} else {
					x[p] = val
				}
				return
			}
			cur = x[p]
		case []any:
			n, err := strconv.Atoi(p)
			if err != nil || n >= len(x) {
				t.Fatalf("edit %v: bad index %q", path, p)
			}
			if last {
				x[n] = val
				return
			}
			cur = x[n]
		default:
			t.Fatalf("edit %v: %q is under a %T", path, p, cur)
		}
	}
}

func TestMutatedPayloadsFail(t *testing.T) {
	ss := testSchemas(t)
	dir := payloadDir(t)
	const (
		srl   = "srl_roce.json"
		sonic = "sonic_configdb.json"
		oc    = "oc_qos.json"
		eos   = "eos_oc_augments.json"
	)
	q := "srl_nokia-qos:qos"
	o := "openconfig-qos:qos"
	tests := []struct {
		name string
		file string
		path string // slash-separated, see edit
		val  any
		del  bool
		// wantPath is the data path the violation must name.
		wantPath string
	}{
		{"srl unknown leaf", srl, q + "/classifiers/dscp-policy/0/bogus", true, false, "/srl_nokia-qos:qos/classifiers/dscp-policy[name=ROCE_DSCP]/bogus"},
		{"srl out of range percent", srl, q + "/buffer-management/queue-management-profile/0/wred/wred-slope/0/max-drop-probability-percent", json.Number("101"), false, "/srl_nokia-qos:qos/buffer-management/queue-management-profile[name=ROCE_ECN]/wred/wred-slope[traffic-type=all][drop-probability=all][enable-ecn=true]/max-drop-probability-percent"},
		{"srl dscp out of range", srl, q + "/classifiers/dscp-policy/0/dscp/0/value", json.Number("64"), false, "/srl_nokia-qos:qos/classifiers/dscp-policy[name=ROCE_DSCP]/dscp[value=64]/value"},
		{"srl bad enum", srl, q + "/scheduler-policies/scheduler-policy/0/scheduler/0/priority", "strictest", false, "/srl_nokia-qos:qos/scheduler-policies/scheduler-policy[name=ROCE_SCHED]/scheduler[sequence=0]/priority"},
		{"srl forwarding class not a string", srl, q + "/classifiers/dscp-policy/0/dscp/0/forwarding-class", json.Number("3"), false, "/srl_nokia-qos:qos/classifiers/dscp-policy[name=ROCE_DSCP]/dscp[value=26]/forwarding-class"},
		{"srl unqualified top level", srl, "qos", map[string]any{}, false, "/qos"},
		{"srl missing key", srl, q + "/classifiers/dscp-policy/0/name", nil, true, "/srl_nokia-qos:qos/classifiers/dscp-policy[name=?]"},
		{"srl boolean as string", srl, q + "/buffer-management/queue-management-profile/0/wred/wred-slope/0/enable-ecn", "true", false, "/srl_nokia-qos:qos/buffer-management/queue-management-profile[name=ROCE_ECN]/wred/wred-slope[traffic-type=all][drop-probability=all][enable-ecn=true]/enable-ecn"},
		{"srl presence container not object", srl, q + "/explicit-congestion-notification", true, false, "/srl_nokia-qos:qos/explicit-congestion-notification"},
		{"srl watchdog timer out of range", srl, q + "/pfc-mapping-profile/0/received-pfc-pause-frames/deadlock/detection-timer", json.Number("5"), false, "/srl_nokia-qos:qos/pfc-mapping-profile[name=ROCE_PFC]/received-pfc-pause-frames/deadlock/detection-timer"},
		// enable-pfc under received-traffic is if-feature future-0-0: no
		// released SR Linux has it, so a device rejects it as unknown.
		{"srl leaf of an unreleased feature", srl, q + "/pfc-mapping-profile/0/received-traffic/unicast-mapping/pfc-queue/0/enable-pfc", true, false, "/srl_nokia-qos:qos/pfc-mapping-profile[name=ROCE_PFC]/received-traffic/unicast-mapping/pfc-queue[pfc-queue-name=pfc3]/enable-pfc"},
		{"oc unknown identity", oc, o + "/buffer-allocation-profiles/buffer-allocation-profile/0/queues/queue/0/config/shared-buffer-limit-type", "openconfig-qos:NOT_AN_IDENTITY", false, "/openconfig-qos:qos/buffer-allocation-profiles/buffer-allocation-profile[name=ROCE_BUF]/queues/queue[name=ROCE]/config/shared-buffer-limit-type"},
		{"oc identity wrong module", oc, o + "/buffer-allocation-profiles/buffer-allocation-profile/0/queues/queue/0/config/shared-buffer-limit-type", "openconfig-interfaces:DYNAMIC_BASED_ON_SCALING_FACTOR", false, "/openconfig-qos:qos/buffer-allocation-profiles/buffer-allocation-profile[name=ROCE_BUF]/queues/queue[name=ROCE]/config/shared-buffer-limit-type"},
		{"oc list key mismatch", oc, o + "/queues/queue/0/config/name", "OTHER", false, "/openconfig-qos:qos/queues/queue[name=BE]/config/name"},
		{"oc uint64 as number", oc, o + "/queue-management-profiles/queue-management-profile/0/wred/uniform/config/min-threshold", json.Number("153600"), false, "/openconfig-qos:qos/queue-management-profiles/queue-management-profile[name=ROCE_ECN]/wred/uniform/config/min-threshold"},
		{"oc bad dscp in leaf-list", oc, o + "/classifiers/classifier/0/terms/term/0/conditions/ipv4/config/dscp-set", []any{json.Number("99")}, false, "/openconfig-qos:qos/classifiers/classifier[name=ROCE_V4]/terms/term[id=10-roce]/conditions/ipv4/config/dscp-set[0]"},
		{"oc state node", oc, o + "/queues/queue/0/state", map[string]any{"name": "BE"}, false, "/openconfig-qos:qos/queues/queue[name=BE]/state"},
		{"eos augment not qualified", eos, o + "/pfc", map[string]any{}, false, "/openconfig-qos:qos/pfc"},
		{"eos bad decimal64", eos, o + "/arista-qos-augments:pfc/watchdog/config/default-timeout", "0.2.0", false, "/openconfig-qos:qos/arista-qos-augments:pfc/watchdog/config/default-timeout"},
		{"eos bad enum action", eos, o + "/arista-qos-augments:pfc/watchdog/config/action", "REBOOT", false, "/openconfig-qos:qos/arista-qos-augments:pfc/watchdog/config/action"},
		{"sonic unknown field", sonic, "PORT_QOS_MAP/Ethernet0/pfc_enabled", "3", false, "sonic-db:/CONFIG_DB/localhost/PORT_QOS_MAP/Ethernet0/pfc_enabled"},
		{"sonic weight out of range", sonic, "SCHEDULER/SCHED_ROCE/weight", "200", false, "sonic-db:/CONFIG_DB/localhost/SCHEDULER/SCHED_ROCE/weight"},
		{"sonic bad ecn enum", sonic, "WRED_PROFILE/ROCE_ECN/ecn", "ecn_everything", false, "sonic-db:/CONFIG_DB/localhost/WRED_PROFILE/ROCE_ECN/ecn"},
		{"sonic bad pfc_enable pattern", sonic, "PORT_QOS_MAP/Ethernet0/pfc_enable", "3,9", false, "sonic-db:/CONFIG_DB/localhost/PORT_QOS_MAP/Ethernet0/pfc_enable"},
		{"sonic bad map entry", sonic, "DSCP_TO_TC_MAP/ROCE/64", "3", false, "sonic-db:/CONFIG_DB/localhost/DSCP_TO_TC_MAP/ROCE/64"},
		{"sonic watchdog out of range", sonic, "PFC_WD/Ethernet0/detection_time", "50", false, "sonic-db:/CONFIG_DB/localhost/PFC_WD/Ethernet0/detection_time"},
		{"sonic number not string", sonic, "SCHEDULER/SCHED_ROCE/weight", json.Number("60"), false, "sonic-db:/CONFIG_DB/localhost/SCHEDULER/SCHED_ROCE/weight"},
		{"sonic unknown table", sonic, "NOT_A_TABLE", map[string]any{}, false, "sonic-db:/CONFIG_DB/localhost/NOT_A_TABLE"},
		{"sonic bad priority group key", sonic, "BUFFER_PG/Ethernet0|9", map[string]any{"profile": "ingress_lossy_profile"}, false, "sonic-db:/CONFIG_DB/localhost/BUFFER_PG/Ethernet0|9"},
		{"sonic key with too many parts", sonic, "SCHEDULER/A|B", map[string]any{"type": "STRICT"}, false, "sonic-db:/CONFIG_DB/localhost/SCHEDULER/A|B"},
	}
	platform := map[string]intent.Platform{srl: intent.PlatformSRLinux, sonic: intent.PlatformSONiC, oc: intent.PlatformOpenConfig, eos: intent.PlatformEOS}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.UseNumber()
			var doc any
			if err := dec.Decode(&doc); err != nil {
				t.Fatal(err)
			}
			edit(t, doc, strings.Split(tc.path, "/"), tc.val, tc.del)
			mut, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			var p *gnmipb.Path
			for _, sp := range sharedPayloads {
				if sp.file == tc.file {
					p = sp.path
				}
			}
			got := ss[platform[tc.file]].Validate(p, mut)
			if len(got) == 0 {
				t.Fatalf("Validate(%s with %s changed) = no violations, want one at %s", tc.file, tc.path, tc.wantPath)
			}
			var paths []string
			for _, v := range got {
				paths = append(paths, v.Path)
			}
			if !slices.Contains(paths, tc.wantPath) {
				t.Errorf("Validate(%s with %s changed) violations at %q, want one at %q\n%v", tc.file, tc.path, paths, tc.wantPath, got)
			}
		})
	}
}

func TestValidateAtPath(t *testing.T) {
	ss := testSchemas(t)
	elem := func(name string, kv ...string) *gnmipb.PathElem {
		e := &gnmipb.PathElem{Name: name}
		for i := 0; i+1 < len(kv); i += 2 {
			if e.Key == nil {
				e.Key = map[string]string{}
			}
			e.Key[kv[i]] = kv[i+1]
		}
		return e
	}
	path := func(origin string, elems ...*gnmipb.PathElem) *gnmipb.Path {
		return &gnmipb.Path{Origin: origin, Elem: elems}
	}
	tests := []struct {
		name     string
		platform intent.Platform
		path     *gnmipb.Path
		val      string
		wantOK   bool
	}{
		{"srl list entry", intent.PlatformSRLinux, path("", elem("qos"), elem("classifiers"), elem("dscp-policy", "name", "ROCE")),
			`{"name":"ROCE","dscp":[{"value":26,"forwarding-class":"fc3"}]}`, true},
		{"srl list entry without key member", intent.PlatformSRLinux, path("", elem("qos"), elem("classifiers"), elem("dscp-policy", "name", "ROCE")),
			`{"dscp":[{"value":26,"forwarding-class":"fc3"}]}`, true},
		{"srl key differs from path", intent.PlatformSRLinux, path("", elem("qos"), elem("classifiers"), elem("dscp-policy", "name", "ROCE")),
			`{"name":"OTHER"}`, false},
		{"srl path key missing", intent.PlatformSRLinux, path("", elem("qos"), elem("classifiers"), elem("dscp-policy", "nam", "ROCE")),
			`{}`, false},
		{"srl qualified path", intent.PlatformSRLinux, path("", elem("srl_nokia-qos:qos"), elem("explicit-congestion-notification")),
			`{}`, true},
		{"srl duplicate list entry", intent.PlatformSRLinux, path("", elem("qos"), elem("classifiers"), elem("dscp-policy", "name", "ROCE")),
			`{"name":"ROCE","dscp":[{"value":26,"forwarding-class":"fc3"},{"value":26,"forwarding-class":"fc4"}]}`, false},
		{"srl duplicate leaf-list value", intent.PlatformSRLinux, path("", elem("qos"), elem("pfc-mapping-profile", "name", "P")),
			`{"name":"P","received-traffic":{"unicast-mapping":{"pfc-queue":[{"pfc-queue-name":"pfc3","forwarding-class":["fc3","fc3"]}]}}}`, false},
		{"srl mandatory leaf missing", intent.PlatformSRLinux, path("", elem("qos"), elem("queues"), elem("pfc-queue", "pfc-queue-name", "lossless")),
			`{"pfc-queue-name":"lossless"}`, false},
		{"srl mandatory leaf present", intent.PlatformSRLinux, path("", elem("qos"), elem("queues"), elem("pfc-queue", "pfc-queue-name", "lossless")),
			`{"pfc-queue-name":"lossless","queue-index":3}`, true},
		{"srl choice cases conflict", intent.PlatformSRLinux, path("", elem("qos"), elem("scheduler-policies"), elem("queue-scheduling-policy", "name", "Q")),
			`{"name":"Q","scheduler":[{"sequence-id":0,"rate":{"peak-rate-kbps":"1000","peak-rate-percentage":50}}]}`, false},
		{"srl unknown path element", intent.PlatformSRLinux, path("", elem("qos"), elem("nothing-here")), `{}`, false},
		{"srl leaf value", intent.PlatformSRLinux, path("", elem("qos"), elem("interfaces"), elem("interface", "interface-id", "ethernet-1/1"), elem("pfc"), elem("pfc-enable")),
			`true`, true},
		{"srl leaf value wrong type", intent.PlatformSRLinux, path("", elem("qos"), elem("interfaces"), elem("interface", "interface-id", "ethernet-1/1"), elem("pfc"), elem("pfc-enable")),
			`1`, false},
		{"srl invalid JSON", intent.PlatformSRLinux, path("", elem("qos")), `{"a":`, false},
		{"oc origin openconfig", intent.PlatformOpenConfig, path("openconfig", elem("qos"), elem("queues"), elem("queue", "name", "ROCE")),
			`{"name":"ROCE","config":{"name":"ROCE","queue-id":3}}`, true},
		{"oc config name differs from path key", intent.PlatformOpenConfig, path("", elem("qos"), elem("queues"), elem("queue", "name", "ROCE")),
			`{"name":"ROCE","config":{"name":"CNP"}}`, false},
		{"eos augment at its own path", intent.PlatformEOS, path("", elem("qos"), elem("arista-qos-augments:pfc"), elem("watchdog")),
			`{"config":{"action":"DROP","default-timeout":"0.20"}}`, true},
		{"cli origin is not YANG", intent.PlatformEOS, path("cli"), `"qos map dscp 26 to traffic-class 3"`, false},
		{"sonic key", intent.PlatformSONiC, path("sonic-db", elem("CONFIG_DB"), elem("localhost"), elem("PORT_QOS_MAP"), elem("Ethernet0")),
			`{"pfc_enable":"3","pfcwd_sw_enable":"3"}`, true},
		{"sonic field", intent.PlatformSONiC, path("sonic-db", elem("CONFIG_DB"), elem("localhost"), elem("PFC_WD"), elem("Ethernet0"), elem("detection_time")),
			`"200"`, true},
		{"sonic field out of range", intent.PlatformSONiC, path("sonic-db", elem("CONFIG_DB"), elem("localhost"), elem("PFC_WD"), elem("Ethernet0"), elem("detection_time")),
			`"99"`, false},
		{"sonic global key", intent.PlatformSONiC, path("sonic-db", elem("CONFIG_DB"), elem("localhost"), elem("PFC_WD"), elem("GLOBAL")),
			`{"POLL_INTERVAL":"100"}`, true},
		{"sonic APPL_DB is not modelled", intent.PlatformSONiC, path("sonic-db", elem("APPL_DB"), elem("localhost")), `{}`, false},
		{"sonic flex counter container key", intent.PlatformSONiC, path("sonic-db", elem("CONFIG_DB"), elem("localhost"), elem("FLEX_COUNTER_TABLE"), elem("PFCWD")),
			`{"FLEX_COUNTER_STATUS":"enable"}`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ss[tc.platform].Validate(tc.path, []byte(tc.val))
			if gotOK := len(got) == 0; gotOK != tc.wantOK {
				t.Errorf("Validate(%s, %s) = %v, want ok=%v", PathString(tc.path), tc.val, got, tc.wantOK)
			}
		})
	}
}

func BenchmarkValidate(b *testing.B) {
	ss := testSchemas(b)
	dir := payloadDir(b)
	for _, sp := range sharedPayloads {
		val, err := os.ReadFile(filepath.Join(dir, sp.file))
		if err != nil {
			b.Fatal(err)
		}
		s := ss[sp.platform]
		b.Run(sp.file, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if vs := s.Validate(sp.path, val); len(vs) != 0 {
					b.Fatal(vs)
				}
			}
		})
	}
}

func BenchmarkLoad(b *testing.B) {
	root, err := Dir()
	if err != nil {
		b.Skip(err)
	}
	for b.Loop() {
		if _, err := LoadPlatform(root, intent.PlatformSRLinux); err != nil {
			b.Fatal(err)
		}
	}
}

// TestConcurrentValidate: a Schema is shared by concurrent validations (run
// with -race).
func TestConcurrentValidate(t *testing.T) {
	ss := testSchemas(t)
	dir := payloadDir(t)
	var wg sync.WaitGroup
	errs := make([]Violations, 4*len(sharedPayloads))
	for i := 0; i < 4; i++ {
		for j, sp := range sharedPayloads {
			b, err := os.ReadFile(filepath.Join(dir, sp.file))
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func(slot int, s *Schema, p *gnmipb.Path, b []byte) {
				defer wg.Done()
				errs[slot] = s.Validate(p, b)
			}(i*len(sharedPayloads)+j, ss[sp.platform], sp.path, b)
		}
	}
	wg.Wait()
	for i, vs := range errs {
		if len(vs) != 0 {
			t.Errorf("validation %d: %v", i, vs)
		}
	}
}
