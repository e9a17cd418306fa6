package yangcheck

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
)

// TestFillDefaults: YANG defaults of the embedded models are filled into
// the leaves a value lacks, in list entries and in non-presence containers,
// and values that are present are kept (openconfig-qos-elements:
// red|wred/uniform/config/{drop,enable-ecn} default false; srl_nokia-qos
// pfc-queue maximum-burst-size default 51200).
func TestFillDefaults(t *testing.T) {
	for _, tc := range []struct {
		pl       intent.Platform
		path     []string
		key      string
		in, want string
	}{
		{intent.PlatformOpenConfig, []string{"qos", "queue-management-profiles", "queue-management-profile"}, "name",
			`{"name":"X","wred":{"uniform":{"config":{"enable-ecn":true,"min-threshold":"1"}}}}`,
			`{"name":"X","red":{"uniform":{"config":{"drop":false,"enable-ecn":false}}},"wred":{"uniform":{"config":{"drop":false,"enable-ecn":true,"min-threshold":"1"}}}}`},
		{intent.PlatformSRLinux, []string{"qos", "buffer-management", "buffer-allocation-profile"}, "name",
			`{"name":"X","queues":{"pfc-queue":[{"pfc-queue-name":"pfc3","maximum-burst-size":1511424}]}}`,
			`{"name":"X","queues":{"pfc-queue":[{"pfc-queue-name":"pfc3","maximum-burst-size":1511424,"committed-burst-size":102400,"maximum-pfc-reserved-share-percentage":10,"pfc-off-threshold":80,"pfc-on-threshold":100}]}}`},
	} {
		s, err := Platform(tc.pl)
		if err != nil {
			t.Fatal(err)
		}
		p := &gnmipb.Path{}
		for i, e := range tc.path {
			pe := &gnmipb.PathElem{Name: e}
			if i == len(tc.path)-1 {
				pe.Key = map[string]string{tc.key: "X"}
			}
			p.Elem = append(p.Elem, pe)
		}
		var got, want any
		if err := json.Unmarshal([]byte(tc.in), &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
			t.Fatal(err)
		}
		if err := s.FillDefaults(p, got); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(got) // json.Number and string defaults alike
		if err != nil {
			t.Fatal(err)
		}
		got = nil
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s %v: FillDefaults mismatch (-want +got):\n%s", tc.pl, tc.path, diff)
		}
	}
	s, _ := Platform(intent.PlatformOpenConfig)
	if err := s.FillDefaults(&gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "qos"}, {Name: "no-such-node"}}}, map[string]any{}); err == nil {
		t.Error("FillDefaults on an unknown path: no error")
	}
}
