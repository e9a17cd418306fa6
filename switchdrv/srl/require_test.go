package srl

import (
	"encoding/json"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
)

// TestSubinterfaceLack (issue 27 item 4): what a port's subinterface lacks
// for IP MTU 9216 and RoCE packets of 4192 B, by SR Linux's MTU semantics
// (srl_nokia-interfaces.yang: ip-mtu counts the IP packet, default
// /system/mtu/default-ip-mtu, 1500 out of the box; l2-mtu the frame without
// FCS, bridged subinterfaces only, default /system/mtu/default-l2-mtu, 9232;
// srl_nokia-mtu.yang).
func TestSubinterfaceLack(t *testing.T) {
	const ipMTU, roce = 9216, 4192
	for _, tc := range []struct {
		name       string
		sub        int
		v          string // the subinterface as read; "" = absent
		defaultIP  string // /system/mtu/default-ip-mtu as read; "" = absent
		defaultL2  string
		want       bool // a lack
		wantRefuse bool
	}{
		{name: "absent", want: true, wantRefuse: true},
		{name: "routed, no ip-mtu, default unread: 1500", v: `{"index":0,"type":"srl_nokia-interfaces:routed"}`, want: true, wantRefuse: true},
		{name: "no type (routed), default-ip-mtu 9000", v: `{"index":0}`, defaultIP: "9000", want: true},
		{name: "ip-mtu 9216", v: `{"index":0,"ip-mtu":9216}`},
		{name: "qualified members", v: `{"index":0,"srl_nokia-interfaces:type":"srl_nokia-interfaces:routed","srl_nokia-interfaces:ip-mtu":"4000"}`, want: true, wantRefuse: true},
		{name: "ip-mtu 9398 above", v: `{"index":0,"ip-mtu":9398}`},
		{name: "ip-mtu 4191 below RoCE", v: `{"index":0,"ip-mtu":4191}`, want: true, wantRefuse: true},
		{name: "ip-mtu 4192 = RoCE", v: `{"index":0,"ip-mtu":4192}`, want: true},
		{name: "bridged, l2-mtu 9230 = port frame", v: `{"index":0,"type":"bridged","l2-mtu":9230}`},
		{name: "bridged, l2-mtu 9000", v: `{"index":0,"type":"bridged","l2-mtu":9000}`, want: true},
		{name: "bridged, l2-mtu 4205 below the RoCE frame", v: `{"index":0,"type":"bridged","l2-mtu":4205}`, want: true, wantRefuse: true},
		{name: "bridged tagged, l2-mtu 9230 below 9234", sub: 1, v: `{"index":1,"type":"bridged","l2-mtu":9230}`, want: true},
		{name: "bridged, default-l2-mtu 9232", v: `{"index":0,"type":"bridged"}`, defaultL2: "9232"},
		{name: "bridged, nothing read: 9232", v: `{"index":0,"type":"bridged"}`},
		{name: "bridged tagged, nothing read: 9232 below 9234", sub: 1, v: `{"index":1,"type":"bridged"}`, want: true},
		{name: "bridged, default-l2-mtu 9000", v: `{"index":0,"type":"bridged"}`, defaultL2: "9000", want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v any
			if tc.v != "" {
				if err := json.Unmarshal([]byte(tc.v), &v); err != nil {
					t.Fatal(err)
				}
			}
			read := func(p *gnmipb.Path) (any, bool) {
				switch p {
				case defaultIPMTUPath:
					return json.Number(tc.defaultIP), tc.defaultIP != ""
				case defaultL2MTUPath:
					return json.Number(tc.defaultL2), tc.defaultL2 != ""
				}
				return nil, false
			}
			l := subinterfaceLack("ethernet-1/7", tc.sub, ipMTU, roce, v, tc.v != "", read)
			if (l != nil) != tc.want || (l != nil && l.Refuses != tc.wantRefuse) {
				t.Fatalf("lack = %+v, want lack %v refusing %v", l, tc.want, tc.wantRefuse)
			}
		})
	}
}
