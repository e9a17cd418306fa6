package switchdrv_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/srl"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
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

// TestApplyReadsRequirementsWithThePlan: on SR Linux twins with the
// operator's subinterfaces, plan + apply as `fabricctl apply` runs them
// (NoPayload) send two Gets a switch, the first of both the requirements
// (the ports' subinterfaces, the system MTU defaults) and the owned paths,
// requirements first, the second (verify) of the owned paths alone: the
// tail of the first request, not marshalled again.
func TestApplyReadsRequirementsWithThePlan(t *testing.T) {
	const n = 2
	f, err := intent.Parse("req.yaml", fmt.Appendf(nil, benchIntent, n, 10000+n))
	if err != nil {
		t.Fatal(err)
	}
	for i := range f.Switches {
		sw := &f.Switches[i]
		tw, err := twin.Start(twin.Options{Name: sw.Name, Platform: intent.PlatformSRLinux, CellBytes: 256})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tw.Close)
		sw.Address = tw.Addr()
		if err := tw.Apply(baseConfig(f, sw)); err != nil {
			t.Fatal(err)
		}
	}
	reg := switchdrv.NewRegistry()
	if err := srl.Register(reg); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	gets := map[string][]*transport.PreparedGet{}
	record := grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if method == gnmipb.GNMI_Get_FullMethodName {
			g, _ := req.(*transport.PreparedGet)
			mu.Lock()
			gets[cc.Target()] = append(gets[cc.Target()], g)
			mu.Unlock()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	})
	e := &switchdrv.Engine{Registry: reg, BackupDir: t.TempDir(), NoPayload: true, Defaults: yangDefaults,
		Transport: transport.Options{Timeout: 30 * time.Second, DialOptions: []grpc.DialOption{record}}}
	defer e.Close()
	p, err := e.Plan(t.Context(), f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := switchdrv.Errors(p); err != nil {
		t.Fatal(err)
	}
	if res, err := e.Apply(t.Context(), f, p); err != nil || res.Status != switchdrv.StatusApplied {
		t.Fatalf("apply: %v %+v", err, res)
	}
	for _, sw := range f.Switches {
		gs := gets[sw.Address]
		if len(gs) != 2 || gs[0] == nil || gs[1] == nil {
			t.Fatalf("%s: Gets %v, want two prepared ones (plan, verify)", sw.Name, gs)
		}
		read, verify := gs[0].Paths(), gs[1].Paths()
		nr := len(read) - len(verify)
		// The payload's deletes (what an earlier intent may have left:
		// the WRED-ECN profiles of classes without ECN) are read by the
		// plan and, absent on this fresh switch, neither sent nor
		// verified.
		d, err := srl.Platform{}.Compile(f, &sw)
		if err != nil {
			t.Fatal(err)
		}
		// The stale-object rule's lists (switchdrv.Owned: the WRED-ECN
		// profiles) lead it; their scopes are read only where a list holds
		// an entry that may be stale, which this fresh switch does not.
		no := switchdrv.OwnedLists(d)
		if no == 0 {
			t.Fatalf("%s: SR Linux declares no owned lists", sw.Name)
		}
		if want := no + 2 + len(sw.Ports) + len(d.Deletes); nr != want {
			t.Fatalf("%s: the plan's Get reads %d paths more than verify's, want the %d owned lists, %d requirements and %d deletes", sw.Name, nr, no, 2+len(sw.Ports), len(d.Deletes))
		}
		if got, want := transport.PathString(read[no+2]), transport.PathString(srl.SubinterfacePath(sw.Ports[0].Name, sw.Ports[0].Subinterface)); got != want {
			t.Errorf("%s: the plan's Get reads %s after the owned lists and two requirements, want the first subinterface %s", sw.Name, got, want)
		}
		if &read[nr] != &verify[0] {
			t.Errorf("%s: verify's Get is not the tail of the plan's", sw.Name)
		}
	}
}
