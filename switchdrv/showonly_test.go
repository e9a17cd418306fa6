package switchdrv_test

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/srl"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// TestShowOnlyPlansTheSame: a plan only shown (ShowOnly, as plan -o text
// and diff run it: values the switch answers in fabricctl's own text are
// compared as text, never decoded) and a plan apply makes for itself
// (NoPayload: the requirements read with the owned paths, values kept as
// the switch's text) list the very changes, lacks and text of a plan with
// a basis (its reads in full, the requirements in a Get of their own), on
// SR Linux twins in every state: empty but for
// the operator's subinterfaces, in sync, drifted (a leaf changed, a
// subtree removed), and one without a port's subinterface.
func TestShowOnlyPlansTheSame(t *testing.T) {
	const n = 5
	f, err := intent.Parse("show.yaml", fmt.Appendf(nil, benchIntent, n, 10000+n))
	if err != nil {
		t.Fatal(err)
	}
	twins := make([]*twin.Twin, n)
	for i := range f.Switches {
		sw := &f.Switches[i]
		tw, err := twin.Start(twin.Options{Name: sw.Name, Platform: intent.PlatformSRLinux, CellBytes: 256})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tw.Close)
		twins[i] = tw
		sw.Address = tw.Addr()
		if i != 4 {
			if err := tw.Apply(baseConfig(f, sw)); err != nil {
				t.Fatal(err)
			}
		}
	}
	reg := switchdrv.NewRegistry()
	if err := srl.Register(reg); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	gets := map[string]int{} // Gets by target address
	countGets := grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if method == gnmipb.GNMI_Get_FullMethodName {
			mu.Lock()
			gets[cc.Target()]++
			mu.Unlock()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	})
	engine := func(showOnly bool) *switchdrv.Engine {
		return &switchdrv.Engine{Registry: reg, BackupDir: t.TempDir(), Parallel: 4, NoPayload: true, ShowOnly: showOnly,
			Transport: transport.Options{Timeout: 30 * time.Second, DialOptions: []grpc.DialOption{countGets}}, Defaults: yangDefaults}
	}
	// withBasis plans as plan --out does: the owned paths read alone (the
	// basis hashes them), the requirements in a Get of their own.
	withBasis := func() *switchdrv.Engine {
		e := engine(false)
		e.NoPayload = false
		return e
	}
	// Switches 1-3 in sync, then 2 and 3 drift; 0 stays empty.
	e := engine(false)
	p, err := e.Plan(t.Context(), f, []string{"leaf2", "leaf3", "leaf4"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Apply(t.Context(), f, p); err != nil {
		t.Fatal(err)
	}
	e.Close()
	mtu, _ := transport.ParsePath("/qos/buffer-management")
	if err := twins[1].Delete(mtu); err != nil {
		t.Fatal(err)
	}
	sched, _ := transport.ParsePath("/qos/scheduler-policies")
	if err := twins[2].Delete(sched); err != nil {
		t.Fatal(err)
	}
	render := func(e *switchdrv.Engine) (*plan.Plan, string) {
		defer e.Close()
		p, err := e.Plan(t.Context(), f, nil)
		if err != nil {
			t.Fatal(err)
		}
		p.Created = time.Time{}
		var b bytes.Buffer
		if err := plan.WriteText(&b, p); err != nil {
			t.Fatal(err)
		}
		return p, b.String()
	}
	full, fullText := render(withBasis())
	for i := range full.Targets {
		full.Targets[i].Payload, full.Targets[i].Basis = nil, ""
	}
	// Only shown, and planned for apply in this process (NoPayload, as
	// `fabricctl apply` plans), a switch that has what the intent relies
	// on is read in one Get: the owned paths and the requirements'
	// together.
	for _, e := range []struct {
		what string
		eng  *switchdrv.Engine
	}{{"for show", engine(true)}, {"for apply", engine(false)}} {
		clear(gets)
		shown, shownText := render(e.eng)
		for _, i := range []int{0, 1, 2, 3} {
			if n := gets[twins[i].Addr()]; n != 1 {
				t.Errorf("%s: %d Gets to plan %s, want 1", f.Switches[i].Name, n, e.what)
			}
		}
		if shownText != fullText {
			t.Errorf("plan text differs when planned %s:\n--- full read\n%s\n--- %s\n%s", e.what, fullText, e.what, shownText)
		}
		if !reflect.DeepEqual(full.Targets, shown.Targets) {
			t.Errorf("plan targets differ when planned %s", e.what)
		}
	}
	if !full.Targets[0].HasChanges() || !full.Targets[1].HasChanges() || !full.Targets[2].HasChanges() || full.Targets[3].HasChanges() || len(full.Targets[4].Lacks) == 0 {
		t.Errorf("the twins are not in the states the test needs: %s", fullText)
	}
}
