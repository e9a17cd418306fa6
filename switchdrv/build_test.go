package switchdrv_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv"
)

func TestElem(t *testing.T) {
	tests := []struct {
		name string
		kv   []string
		want *gnmipb.PathElem
	}{
		{"no keys", nil, &gnmipb.PathElem{Name: "qos"}},
		{"one key", []string{"name", "A"}, &gnmipb.PathElem{Name: "queue", Key: map[string]string{"name": "A"}}},
		{"two keys", []string{"a", "1", "b", "2"}, &gnmipb.PathElem{Name: "x", Key: map[string]string{"a": "1", "b": "2"}}},
		{"trailing name ignored", []string{"a", "1", "b"}, &gnmipb.PathElem{Name: "x", Key: map[string]string{"a": "1"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := switchdrv.Elem(tc.want.Name, tc.kv...)
			if diff := cmp.Diff(tc.want, got, protocmp.Transform(), cmpopts.IgnoreUnexported(switchdrv.Desired{})); diff != "" {
				t.Errorf("Elem(%q, %q) (-want +got):\n%s", tc.want.Name, tc.kv, diff)
			}
		})
	}
}

func TestDesiredReplaceUpdate(t *testing.T) {
	d := &switchdrv.Desired{}
	if err := d.Replace(map[string]int{"mtu": 9216}, switchdrv.Elem("interface", "name", "e1"), switchdrv.Elem("config")); err != nil {
		t.Fatal(err)
	}
	if err := d.Update(struct{}{}, switchdrv.Elem("qos"), switchdrv.Elem("ecn")); err != nil {
		t.Fatal(err)
	}
	jsonVal := func(s string) *gnmipb.TypedValue {
		return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(s)}}
	}
	want := &gnmipb.SetRequest{
		Replace: []*gnmipb.Update{{
			Path: &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "interface", Key: map[string]string{"name": "e1"}}, {Name: "config"}}},
			Val:  jsonVal(`{"mtu":9216}`),
		}},
		Update: []*gnmipb.Update{{
			Path: &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "qos"}, {Name: "ecn"}}},
			Val:  jsonVal(`{}`),
		}},
	}
	if diff := cmp.Diff(want, d.SetRequest(), protocmp.Transform()); diff != "" {
		t.Errorf("SetRequest() (-want +got):\n%s", diff)
	}

	// A value encoding/json cannot encode is an error naming the leaf and
	// adds nothing.
	err := d.Replace(make(chan int), switchdrv.Elem("qos"), switchdrv.Elem("queue", "name", "q"))
	if got, want := err.Error(), "marshal queue: json: unsupported type: chan int"; got != want {
		t.Errorf("Replace(chan) error = %q, want %q", got, want)
	}
	if err := d.Update(func() {}, switchdrv.Elem("mtu")); err == nil {
		t.Error("Update(func) = nil error")
	}
	if got := len(d.Replaces) + len(d.Updates); got != 2 {
		t.Errorf("after failed Replace/Update: %d updates, want 2", got)
	}
}

func TestCompileFrame(t *testing.T) {
	f, sw := &intent.Fabric{}, &intent.Switch{Name: "leaf1"}
	errBoom := errors.New("boom")
	tests := []struct {
		name    string
		f       *intent.Fabric
		sw      *intent.Switch
		compile func(*switchdrv.Desired) error
		want    *switchdrv.Desired
		wantErr string
	}{
		{"nil fabric", nil, sw, nil, nil, "sonic: compile: nil fabric or switch"},
		{"nil switch", f, nil, nil, nil, "sonic: compile: nil fabric or switch"},
		{"error names switch and platform", f, sw, func(*switchdrv.Desired) error { return errBoom }, nil, "switch leaf1 (sonic): boom"},
		{"desired", f, sw, func(d *switchdrv.Desired) error {
			d.Notes = append(d.Notes, "n")
			return nil
		}, &switchdrv.Desired{Switch: "leaf1", Platform: intent.PlatformSONiC, Encoding: gnmipb.Encoding_JSON_IETF, Notes: []string{"n"}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := switchdrv.Compile(intent.PlatformSONiC, tc.f, tc.sw, tc.compile)
			if gotErr := errString(err); gotErr != tc.wantErr {
				t.Fatalf("Compile error = %q, want %q", gotErr, tc.wantErr)
			}
			if tc.wantErr != "" && tc.compile != nil && !errors.Is(err, errBoom) {
				t.Errorf("Compile error %v does not wrap %v", err, errBoom)
			}
			if diff := cmp.Diff(tc.want, got, protocmp.Transform(), cmpopts.IgnoreUnexported(switchdrv.Desired{})); diff != "" {
				t.Errorf("Compile (-want +got):\n%s", diff)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
