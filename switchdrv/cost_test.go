package switchdrv_test

import (
	"context"
	"net"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"

	"github.com/fabricctl/fabricctl/switchdrv/transport"
)

// TestApplyCostPerSwitch: plan + apply of a fresh plan in one process dials
// each switch once and asks its Capabilities once; it reads it once to plan
// (the read is also the basis and the backup) and once to verify, and sends
// one Set. (Before: two dials, two Capabilities and three Gets a switch.)
// The two reads send one GetRequest, marshalled once; the Set's reply,
// which fabricctl does not use, is not decoded.
func TestApplyCostPerSwitch(t *testing.T) {
	l := newLab(t, 3, 0)
	var mu sync.Mutex
	calls := map[string]int{}
	gets := map[string][]any{} // per target, the GetRequests as sent
	decodedSets := 0
	count := func(what string) {
		mu.Lock()
		calls[what]++
		mu.Unlock()
	}
	var d net.Dialer
	l.eng.Transport.DialOptions = []grpc.DialOption{
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			count("dial")
			return d.DialContext(ctx, "tcp", addr)
		}),
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			count(method[len("/gnmi.gNMI/"):])
			mu.Lock()
			switch method {
			case gnmipb.GNMI_Get_FullMethodName:
				gets[cc.Target()] = append(gets[cc.Target()], req)
			case gnmipb.GNMI_Set_FullMethodName:
				if _, ok := reply.(*gnmipb.SetResponse); ok {
					decodedSets++
				}
			}
			mu.Unlock()
			return invoker(ctx, method, req, reply, cc, opts...)
		}),
	}
	defer l.eng.Close()
	if _, err := l.eng.Apply(t.Context(), l.f, l.plan(t)); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"dial": 3, "Capabilities": 3, "Get": 6, "Set": 3}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("RPCs for plan + apply of 3 switches (-want +got):\n%s", diff)
	}
	for target, reqs := range gets {
		g, ok := reqs[0].(*transport.PreparedGet)
		if len(reqs) != 2 || !ok || reqs[1] != reqs[0] {
			t.Errorf("%s: GetRequests %T, want one *transport.PreparedGet sent twice (plan, verify)", target, reqs)
		} else if len(g.Paths()) == 0 {
			t.Errorf("%s: the prepared GetRequest reads no path", target)
		}
	}
	if decodedSets != 0 {
		t.Errorf("%d Set replies decoded, want none (apply uses only the outcome)", decodedSets)
	}
}
