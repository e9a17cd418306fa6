package switchdrv

import (
	"context"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
)

// orderTarget is a test double of a gNMI target whose Get answers each
// asked path with a fixed JSON value, in the order asked, reversed, or as
// one notification with a prefix; with gaps it has only every other path
// (the first, the third, ...) and answers the others with no update.
type orderTarget struct {
	gnmipb.UnimplementedGNMIServer
	reverse, prefixed, gaps bool
}

func (o *orderTarget) Get(_ context.Context, req *gnmipb.GetRequest) (*gnmipb.GetResponse, error) {
	var notes []*gnmipb.Notification
	for i, p := range req.GetPath() {
		if o.gaps && i%2 == 1 {
			notes = append(notes, &gnmipb.Notification{})
			continue
		}
		js := []byte(`{"name":"` + p.GetElem()[len(p.GetElem())-1].GetKey()["name"] + `","v":1}`)
		n := &gnmipb.Notification{Update: []*gnmipb.Update{{Path: p, Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: js}}}}}
		if o.prefixed {
			n.Prefix = &gnmipb.Path{Elem: p.GetElem()[:1]}
			n.Update[0].Path = &gnmipb.Path{Elem: p.GetElem()[1:]}
		}
		notes = append(notes, n)
	}
	if o.reverse {
		slices.Reverse(notes)
	}
	return &gnmipb.GetResponse{Notification: notes}, nil
}

// observedEntry is what a read entry gives its users: its path, whether
// it exists, the switch's JSON or CLI text (what a backup keeps) and the
// value compare walks (decoded, module qualifiers stripped), however the
// read kept it (decoded or as text only).
type observedEntry struct {
	Path   string
	Exists bool
	JSON   string
	ASCII  *string
	Value  any
}

func observed(t *testing.T, s *Snapshot) []observedEntry {
	t.Helper()
	out := make([]observedEntry, len(s.Entries))
	for i, e := range s.Entries {
		v, err := e.value()
		if err != nil {
			t.Fatalf("entry %s: %v", e.Path, err)
		}
		out[i] = observedEntry{Path: e.Path, Exists: e.Exists, JSON: string(e.JSON), ASCII: e.ASCII, Value: v}
	}
	return out
}

// TestObserveKeysAnyOrder: observeAs with the asked paths' keys given (as
// plan and verify pass them) reads the same snapshot as with none, whether
// the target answers in the order asked, reversed, or under a prefix, and
// whether or not it has every path.
func TestObserveKeysAnyOrder(t *testing.T) {
	var paths []*gnmipb.Path
	for _, n := range []string{"a", "b", "c", "d"} {
		p, err := transport.ParsePath("/qos/queues/queue[name=" + n + "]")
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	req := &gnmipb.SetRequest{}
	for _, p := range paths {
		req.Replace = append(req.Replace, &gnmipb.Update{Path: p})
	}
	owned, keys := ownedPaths(req, nil)
	for i := range owned {
		if keys[i] != jtree.PathKey(owned[i]) {
			t.Fatalf("ownedPaths key %d = %s, want %s", i, keys[i], jtree.PathKey(owned[i]))
		}
	}
	for _, tgt := range []*orderTarget{{}, {reverse: true}, {prefixed: true}, {reverse: true, prefixed: true},
		{gaps: true}, {gaps: true, reverse: true}, {gaps: true, prefixed: true}} {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := grpc.NewServer()
		gnmipb.RegisterGNMIServer(srv, tgt)
		go srv.Serve(lis)
		sw := &intent.Switch{Name: "leaf1", Address: lis.Addr().String(), TLS: intent.TLS{Insecure: true}}
		c, err := transport.Dial(t.Context(), *sw, transport.Options{Timeout: 10 * time.Second, Attempts: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, full := range []bool{false, true} {
			want, err := observeAs(t.Context(), c, sw, owned, nil, full, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			// With keys, and the GetRequest marshalled at the first read
			// and sent again at the second (plan's read, then verify's).
			var get *transport.PreparedGet
			for read := 1; read <= 2; read++ {
				got, err := observeAs(t.Context(), c, sw, owned, keys, full, false, &get)
				if err != nil {
					t.Fatal(err)
				}
				if get == nil || len(get.Paths()) != len(owned) {
					t.Fatalf("read %d left no prepared GetRequest of the %d paths", read, len(owned))
				}
				if diff := cmp.Diff(observed(t, want), observed(t, got)); diff != "" {
					t.Errorf("%+v full=%v read %d: with keys (-without +with):\n%s", *tgt, full, read, diff)
				}
				for i, e := range got.Entries {
					if e.Path != keys[i] || e.Exists != (!tgt.gaps || i%2 == 0) {
						t.Errorf("%+v full=%v read %d: entry %d = %s exists %v", *tgt, full, read, i, e.Path, e.Exists)
					}
				}
			}
		}
		c.Close()
		srv.Stop()
	}
}
