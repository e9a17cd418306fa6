package transport

import (
	"bytes"
	"slices"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

func elem(name string, keys ...string) *gnmipb.PathElem {
	e := &gnmipb.PathElem{Name: name}
	for i := 0; i+1 < len(keys); i += 2 {
		if e.Key == nil {
			e.Key = map[string]string{}
		}
		e.Key[keys[i]] = keys[i+1]
	}
	return e
}

// askedPaths are the paths the replies of the tests below answer: list
// entries with one key and with two, a leaf, an origin.
func askedPaths() []*gnmipb.Path {
	return []*gnmipb.Path{
		{Elem: []*gnmipb.PathElem{elem("qos"), elem("interfaces"), elem("interface", "interface-id", "ethernet-1/1")}},
		{Elem: []*gnmipb.PathElem{elem("interface", "name", "ethernet-1/1"), elem("mtu")}},
		{Origin: "openconfig", Elem: []*gnmipb.PathElem{elem("qos"), elem("queues"), elem("queue", "name", "q3", "port", "Ethernet0")}},
		{Elem: []*gnmipb.PathElem{elem("interface", "name", "ethernet-1/2"), elem("ethernet"), elem("flow-control")}},
	}
}

func jsonIETF(s string) *gnmipb.TypedValue {
	return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(s)}}
}

// replies are GetResponses of the shapes targets send, and of shapes
// readReply leaves to proto.Unmarshal.
func replies() []*gnmipb.GetResponse {
	asked := askedPaths()
	inOrder := &gnmipb.Notification{Timestamp: 1700000000000000000}
	for i, p := range asked {
		inOrder.Update = append(inOrder.Update, &gnmipb.Update{Path: proto.Clone(p).(*gnmipb.Path), Val: jsonIETF(`{"n":` + string(rune('0'+i)) + `}`)})
	}
	reversed := proto.Clone(inOrder).(*gnmipb.Notification)
	slices.Reverse(reversed.Update)
	perNote := &gnmipb.GetResponse{}
	for _, u := range inOrder.GetUpdate() {
		perNote.Notification = append(perNote.Notification, &gnmipb.Notification{Timestamp: 7, Update: []*gnmipb.Update{proto.Clone(u).(*gnmipb.Update)}})
	}
	unknown := &gnmipb.Notification{Update: []*gnmipb.Update{{Path: asked[1], Val: jsonIETF(`1`)}}}
	unknown.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 1))
	return []*gnmipb.GetResponse{
		{Notification: []*gnmipb.Notification{inOrder}},
		{Notification: []*gnmipb.Notification{reversed}},
		perNote,
		{}, // nothing there
		// Prefixed, leaf by leaf, other encodings.
		{Notification: []*gnmipb.Notification{{Prefix: &gnmipb.Path{Elem: []*gnmipb.PathElem{elem("interface", "name", "ethernet-1/1")}}, Update: []*gnmipb.Update{
			{Path: &gnmipb.Path{Elem: []*gnmipb.PathElem{elem("mtu")}}, Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_UintVal{UintVal: 9216}}},
			{Path: &gnmipb.Path{Elem: []*gnmipb.PathElem{elem("description")}}, Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_StringVal{StringVal: "uplink"}}},
			{Path: asked[1], Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonVal{JsonVal: []byte(`9216`)}}},
			{Path: asked[0], Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_AsciiVal{AsciiVal: "interface ethernet-1/1"}}},
			{Path: asked[3]}, // no value
			{Val: jsonIETF(`{}`)},
		}}}},
		// Fields readReply does not read.
		{Notification: []*gnmipb.Notification{{Update: []*gnmipb.Update{{Path: asked[0], Val: jsonIETF(`{}`), Duplicates: 2}}}}},
		{Notification: []*gnmipb.Notification{{Delete: []*gnmipb.Path{asked[2]}, Atomic: true}}},
		{Notification: []*gnmipb.Notification{unknown}}, // a field of a later gnmi.proto
		{Notification: []*gnmipb.Notification{inOrder},
			//lint:ignore SA1019 what an old target may still send
			Error: &gnmipb.Error{Code: 5, Message: "gone"}},
		gaps(),
	}
}

// gaps is the reply of a target that has only the second and the fourth
// asked path: the others get no update.
func gaps() *gnmipb.GetResponse {
	asked := askedPaths()
	r := &gnmipb.GetResponse{}
	for i, p := range asked {
		n := &gnmipb.Notification{Timestamp: 7}
		if i%2 == 1 {
			n.Update = []*gnmipb.Update{{Path: p, Val: jsonIETF(`{"n":1}`)}}
		}
		r.Notification = append(r.Notification, n)
	}
	return r
}

// TestReadReplySkipsAbsentPaths: a reply that leaves out the asked paths
// the target does not have (the usual answer to plan's read of a
// requirement the switch lacks) is read in order, each update's path the
// asked one, without an index of every asked path.
func TestReadReplySkipsAbsentPaths(t *testing.T) {
	asked := askedPaths()
	g, err := prepareGet(asked, gnmipb.Encoding_JSON_IETF)
	if err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(gaps())
	if err != nil {
		t.Fatal(err)
	}
	r := &replyReader{g: g}
	notes, ok := readReply(b, r)
	if !ok {
		t.Fatal("readReply left it to proto.Unmarshal")
	}
	var got []*gnmipb.Path
	for _, n := range notes {
		for _, u := range n.GetUpdate() {
			got = append(got, u.GetPath())
		}
	}
	if want := []*gnmipb.Path{asked[1], asked[3]}; !slices.Equal(got, want) {
		t.Errorf("update paths %v, want the asked %v", got, want)
	}
	if r.index != nil {
		t.Errorf("readReply indexed every asked path (%d) for a reply in order with gaps", len(r.index))
	}
}

// FuzzReadReply: a GetPrepared reply decodes (readReply, else
// proto.Unmarshal) to what proto.Unmarshal makes of it, and fails where
// proto.Unmarshal fails; never panics. Read for its values
// (GetPreparedJSON), it gives each asked path the JSON value of its
// update, or the same notifications.
func FuzzReadReply(f *testing.F) {
	for _, r := range replies() {
		b, err := proto.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)*2/3]) // cut short
	}
	g, err := prepareGet(askedPaths(), gnmipb.Encoding_JSON_IETF)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want := &gnmipb.GetResponse{}
		wantErr := proto.Unmarshal(b, want)
		r := &getReply{g: g}
		err := r.decode(bytes.Clone(b))
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("decode error %v, proto.Unmarshal's %v", err, wantErr)
		}
		// The same reply read for its values (GetPreparedJSON).
		rv := &getReply{g: g, values: true}
		if errV := rv.decode(bytes.Clone(b)); (errV != nil) != (wantErr != nil) {
			t.Fatalf("decode for values: error %v, proto.Unmarshal's %v", errV, wantErr)
		}
		if err != nil {
			return
		}
		if got := (&gnmipb.GetResponse{Notification: r.notes}); !proto.Equal(got, &gnmipb.GetResponse{Notification: want.GetNotification()}) {
			t.Fatalf("decoded\n%v\nproto.Unmarshal\n%v", got, want)
		}
		if rv.vals == nil {
			if got := (&gnmipb.GetResponse{Notification: rv.notes}); !proto.Equal(got, &gnmipb.GetResponse{Notification: want.GetNotification()}) {
				t.Fatalf("decoded for values\n%v\nproto.Unmarshal\n%v", got, want)
			}
			return
		}
		checkValues(t, g.Paths(), rv.vals, want)
	})
}

// checkValues fails t unless vals (readValues') are want's updates, one
// per asked path at most, each a JSON value of its asked path, with no
// prefix and nothing else in want.
func checkValues(t *testing.T, asked []*gnmipb.Path, vals [][]byte, want *gnmipb.GetResponse) {
	t.Helper()
	if len(vals) != len(asked) {
		t.Fatalf("%d values for %d asked paths", len(vals), len(asked))
	}
	used := make([]bool, len(asked))
	for _, note := range want.GetNotification() {
		if note.GetPrefix() != nil || len(note.GetDelete()) > 0 || note.GetAtomic() {
			t.Fatalf("read as values: a notification with more than updates: %v", note)
		}
		for _, u := range note.GetUpdate() {
			js := u.GetVal().GetJsonIetfVal()
			if js == nil {
				js = u.GetVal().GetJsonVal()
			}
			found := false
			for i, p := range asked {
				if !used[i] && vals[i] != nil && proto.Equal(p, u.GetPath()) && bytes.Equal(vals[i], js) {
					used[i], found = true, true
					break
				}
			}
			if !found {
				t.Fatalf("update %v is not among the values read %q", u, vals)
			}
		}
	}
	for i, v := range vals {
		if v != nil && !used[i] {
			t.Fatalf("value %q of asked path %d is in no update of %v", v, i, want)
		}
		if cap(v) != len(v) {
			t.Fatalf("value %q has capacity %d beyond its length", v, cap(v))
		}
	}
}

// TestReadValues: the usual replies (in the order asked or not, one
// notification or several, paths left out) are read as values without a
// message made for them; the others are left to readReply.
func TestReadValues(t *testing.T) {
	g, err := prepareGet(askedPaths(), gnmipb.Encoding_JSON_IETF)
	if err != nil {
		t.Fatal(err)
	}
	rs := replies()
	for i, r := range rs {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		vals, ok := readValues(b, &replyReader{g: g})
		// In order, reversed, one per notification, empty, gaps.
		if usual := i <= 3 || i == len(rs)-1; ok != usual {
			t.Errorf("reply %d: read as values %v, want %v", i, ok, usual)
		}
		if ok {
			checkValues(t, g.Paths(), vals, r)
		}
	}
}

// TestReadReplyTakesTheAskedPaths: in the usual shapes (in the order
// asked or not, one notification or several) readReply reads the reply
// itself, each update's path is the asked *gnmipb.Path it repeats, and a
// JSON value is a capped slice of the reply (appending to it copies).
func TestReadReplyTakesTheAskedPaths(t *testing.T) {
	asked := askedPaths()
	g, err := prepareGet(asked, gnmipb.Encoding_JSON_IETF)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range replies()[:3] {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		notes, ok := readReply(b, &replyReader{g: g})
		if !ok {
			t.Fatalf("reply %d: readReply left it to proto.Unmarshal", i)
		}
		var n int
		for _, note := range notes {
			for _, u := range note.GetUpdate() {
				n++
				if !slices.Contains(asked, u.GetPath()) {
					t.Errorf("reply %d: path %v is not an asked *gnmipb.Path", i, u.GetPath())
				}
				v := u.GetVal().GetJsonIetfVal()
				if cap(v) != len(v) {
					t.Errorf("reply %d: value %q has capacity %d beyond its length", i, v, cap(v))
				}
				before := bytes.Clone(b)
				_ = append(v, "XXXX"...)
				if !bytes.Equal(b, before) {
					t.Fatalf("reply %d: appending to a value wrote into the reply", i)
				}
			}
		}
		if n != len(asked) {
			t.Errorf("reply %d: %d updates, want %d", i, n, len(asked))
		}
	}
}
