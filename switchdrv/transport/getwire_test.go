package transport

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/protobuf/proto"
)

// TestMarshalGetConfigIsProtos: marshalGetConfig writes the very bytes of
// proto.MarshalOptions{Deterministic: true} for random GetRequests (0 to
// 40 paths, origins, 0 to 6 elements, 0 to 4 keys each, empty and long
// values, every encoding), and declines paths it does not write the same
// way; the tail of a prepared request from any of its paths
// (PreparedGet.From, and From of that) is proto's request of the paths
// from there on.
func TestMarshalGetConfigIsProtos(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 1))
	str := func(max int) string {
		b := make([]byte, r.IntN(max+1))
		for i := range b {
			b[i] = byte('a' + r.IntN(26))
		}
		return string(b)
	}
	for i := range 2000 {
		paths := make([]*gnmipb.Path, r.IntN(41))
		for j := range paths {
			p := &gnmipb.Path{}
			if r.IntN(3) == 0 {
				p.Origin = []string{"cli", "openconfig", "sonic-db", str(200)}[r.IntN(4)]
			}
			for range r.IntN(7) {
				e := &gnmipb.PathElem{Name: "n" + str(12)}
				if nk := r.IntN(5); nk > 0 {
					e.Key = map[string]string{}
					for range nk {
						e.Key[str(6)] = str(300)
					}
				}
				p.Elem = append(p.Elem, e)
			}
			paths[j] = p
		}
		enc := gnmipb.Encoding(r.IntN(5))
		got, ok := marshalGetConfig(paths, enc)
		want, err := proto.MarshalOptions{Deterministic: true}.Marshal(&gnmipb.GetRequest{Path: paths, Encoding: enc, Type: gnmipb.GetRequest_CONFIG})
		if err != nil {
			t.Fatal(err)
		}
		if !ok || !bytes.Equal(got, want) {
			t.Fatalf("request %d (%d paths, encoding %s): ok %v, bytes differ:\n got %x\nwant %x", i, len(paths), enc, ok, got, want)
		}
		// A prepared request's tail from any path is that of the
		// paths from there on, as proto writes it (PreparedGet.From).
		if len(paths) == 0 {
			continue
		}
		g, err := prepareGet(paths, enc)
		if err != nil {
			t.Fatal(err)
		}
		from := r.IntN(len(paths))
		tail := g.From(from)
		want, err = proto.MarshalOptions{Deterministic: true}.Marshal(&gnmipb.GetRequest{Path: paths[from:], Encoding: enc, Type: gnmipb.GetRequest_CONFIG})
		if err != nil {
			t.Fatal(err)
		}
		if tail == nil || !bytes.Equal(tail.b, want) || len(tail.Paths()) != len(paths)-from || tail.Paths()[0] != paths[from] {
			t.Fatalf("request %d (%d paths, encoding %s): the tail from path %d is not proto's request of those paths", i, len(paths), enc, from)
		}
		// And the tail's own tail (its offsets are its own).
		next := r.IntN(len(paths) - from)
		want, err = proto.MarshalOptions{Deterministic: true}.Marshal(&gnmipb.GetRequest{Path: paths[from+next:], Encoding: enc, Type: gnmipb.GetRequest_CONFIG})
		if err != nil {
			t.Fatal(err)
		}
		if tt := tail.From(next); tt == nil || !bytes.Equal(tt.b, want) || !bytes.Equal(tt.wire[0], g.wire[from+next]) {
			t.Fatalf("request %d (%d paths): the tail from %d, then from %d, is not proto's request of those paths", i, len(paths), from, next)
		}
	}
	for what, p := range map[string]*gnmipb.Path{
		"element": {Element: []string{"a"}},
		"target":  {Target: "t", Elem: []*gnmipb.PathElem{{Name: "a"}}},
		"no name": {Elem: []*gnmipb.PathElem{{Key: map[string]string{"k": "v"}}}},
	} {
		if _, ok := marshalGetConfig([]*gnmipb.Path{p}, 0); ok {
			t.Errorf("%s: written, want declined (proto writes it)", what)
		}
		g, err := prepareGet([]*gnmipb.Path{p}, 0)
		if err != nil {
			t.Errorf("%s: prepareGet: %v", what, err)
			continue
		}
		want, _ := proto.MarshalOptions{Deterministic: true}.Marshal(&gnmipb.GetRequest{Path: []*gnmipb.Path{p}, Type: gnmipb.GetRequest_CONFIG})
		if !bytes.Equal(g.b, want) {
			t.Errorf("%s: prepareGet wrote %x, want proto's %x", what, g.b, want)
		}
	}
}

func BenchmarkPrepareGet(b *testing.B) {
	var paths []*gnmipb.Path
	for i := range 145 {
		paths = append(paths, &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "qos"}, {Name: "interfaces"},
			{Name: "interface", Key: map[string]string{"interface-id": fmt.Sprintf("ethernet-1/%d", i)}}, {Name: "output"}}})
	}
	b.Run("hand", func(b *testing.B) {
		for b.Loop() {
			if _, ok := marshalGetConfig(paths, gnmipb.Encoding_JSON_IETF); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("proto", func(b *testing.B) {
		for b.Loop() {
			if _, err := (proto.MarshalOptions{Deterministic: true}).Marshal(&gnmipb.GetRequest{Path: paths, Encoding: gnmipb.Encoding_JSON_IETF, Type: gnmipb.GetRequest_CONFIG}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
