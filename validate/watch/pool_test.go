package watch

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
)

// TestFrameBuffersBounded: the free lists hand back what was put, by size
// class, and keep no more than their budget; what is beyond it, and
// buffers of no size class, are left to the garbage collector.
func TestFrameBuffersBounded(t *testing.T) {
	p := newFrameBuffers(64 << 10)
	for _, tc := range []struct{ n, capacity int }{
		{1, 256}, {256, 256}, {257, 512}, {9000, 16 << 10}, {16 << 10, 16 << 10}, {1 << 20, 1 << 20}, {1<<20 + 1, 1<<20 + 1},
	} {
		b := p.Get(tc.n)
		if len(*b) != tc.n || cap(*b) != tc.capacity {
			t.Errorf("Get(%d): len %d cap %d, want cap %d", tc.n, len(*b), cap(*b), tc.capacity)
		}
	}
	// Reused within the budget: the very buffer comes back.
	b := p.Get(10000)
	(*b)[0] = 42
	p.Put(b)
	if again := p.Get(12000); again != b || len(*again) != 12000 {
		t.Errorf("a buffer put back was not handed out again (len %d)", len(*again))
	}
	// Past the budget (64 KiB): four 16 KiB buffers are kept, the rest not.
	var held []*[]byte
	for range 10 {
		held = append(held, p.Get(16<<10))
	}
	for _, h := range held {
		p.Put(h)
	}
	if p.kept != 64<<10 || len(p.free[frameTier(16<<10)]) != 4 {
		t.Errorf("kept %d bytes in %d buffers, want the budget, 65536 in 4", p.kept, len(p.free[frameTier(16<<10)]))
	}
	// A buffer of no size class is not kept.
	odd := make([]byte, 3000)
	p2 := newFrameBuffers(1 << 20)
	p2.Put(&odd)
	huge := make([]byte, 2<<20)
	p2.Put(&huge)
	if p2.kept != 0 {
		t.Errorf("kept %d bytes of buffers that are no size class", p2.kept)
	}
}

// TestStartingSessionsBounded: no more than MaxStarting sessions are
// between their dial and their initial sync at once, and every switch
// still comes up. The gNMI server here (real gRPC on loopback) holds each
// subscription's initial sync for a while and counts the subscriptions
// waiting for theirs.
func TestStartingSessionsBounded(t *testing.T) {
	const switches, maxStarting = 8, 2
	var waiting, most atomic.Int32
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, st grpc.ServerStream) error {
		var req gnmipb.SubscribeRequest
		if err := st.RecvMsg(&req); err != nil {
			return err
		}
		n := waiting.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(20 * time.Millisecond) // the others dial meanwhile, unless they wait for a slot
		waiting.Add(-1)
		if err := st.SendMsg(&gnmipb.SubscribeResponse{Response: &gnmipb.SubscribeResponse_SyncResponse{SyncResponse: true}}); err != nil {
			return err
		}
		<-st.Context().Done()
		return nil
	}))
	go func() { _ = srv.Serve(l) }()
	defer srv.Stop()

	f := benchFabric(t, switches, intent.PlatformSRLinux)
	for i := range f.Switches {
		f.Switches[i].Address = l.Addr().String()
		f.Switches[i].TLS.Insecure = true
	}
	w, err := New(Options{Fabric: f, MaxStarting: maxStarting, Transport: transport.Options{Timeout: time.Minute, Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = w.Run(ctx) })
	defer func() {
		cancel()
		wg.Wait()
	}()
	for !allUp(w) {
		time.Sleep(10 * time.Millisecond)
	}
	if m := most.Load(); m > maxStarting || m < 1 {
		t.Errorf("%d sessions waited for their initial sync at once, want at most %d", m, maxStarting)
	}
	if n := len(w.starting); n != 0 {
		t.Errorf("%d start slots still held with every switch up", n)
	}
}
