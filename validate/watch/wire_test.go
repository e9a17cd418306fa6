package watch

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/validate"
)

// pair is the same switches fed two ways: proto.Unmarshal + ingest (the
// reference) and ingestRaw.
type pair struct {
	ref, raw []*switchCounters
}

func newPair(plat intent.Platform, ports [][]string) *pair {
	p := &pair{}
	refShapes, rawShapes := newShapeCache(), newShapeCache()
	for i, ps := range ports {
		src := func() *validate.SwitchCounters {
			return &validate.SwitchCounters{Switch: fmt.Sprintf("leaf%d", i+1), Platform: plat, Ports: ps}
		}
		p.ref = append(p.ref, newSwitchCounters(src(), []int{0, 3, 6}, refShapes))
		p.raw = append(p.raw, newSwitchCounters(src(), []int{0, 3, 6}, rawShapes))
	}
	return p
}

// feed gives one response's wire bytes to switch i both ways and fails on
// the first difference.
func (p *pair) feed(t *testing.T, i int, msg []byte, what string) {
	t.Helper()
	var sb strings.Builder
	var sc rawScratch
	var r gnmipb.SubscribeResponse
	refErr := proto.Unmarshal(msg, &r)
	kind, n, rawErr := p.raw[i].ingestRaw(msg, &sc)
	if (refErr != nil) != (rawErr != nil) {
		t.Fatalf("%s: proto.Unmarshal error %v, ingestRaw error %v\n%x", what, refErr, rawErr, msg)
	}
	if refErr != nil {
		return
	}
	wantKind, wantN := respOther, 0
	switch x := r.GetResponse().(type) {
	case *gnmipb.SubscribeResponse_SyncResponse:
		if x.SyncResponse {
			wantKind = respSync
		}
	case *gnmipb.SubscribeResponse_Update:
		wantKind, wantN = respUpdate, p.ref[i].ingest(x.Update, &sb)
	}
	if kind != wantKind || n != wantN {
		t.Fatalf("%s: ingestRaw says kind %d, %d updates; proto: kind %d, %d updates", what, kind, n, wantKind, wantN)
	}
	ref, raw := p.ref[i], p.raw[i]
	if !slices.Equal(ref.vals, raw.vals) || !slices.Equal(ref.seen, raw.seen) {
		for s := range ref.vals {
			if ref.vals[s] != raw.vals[s] || ref.seen[s] != raw.seen[s] {
				t.Errorf("slot %d: proto %d (seen %v), raw %d (seen %v)", s, ref.vals[s], ref.seen[s], raw.vals[s], raw.seen[s])
			}
		}
		t.Fatalf("%s: the counters differ:\n%s", what, prototextOf(&r))
	}
	if len(ref.scalar) != len(raw.scalar) || len(ref.leaves) != len(raw.leaves) {
		t.Fatalf("%s: proto keeps %d scalar and %d decoded leaves, raw %d and %d", what, len(ref.scalar), len(ref.leaves), len(raw.scalar), len(raw.leaves))
	}
}

func prototextOf(m proto.Message) string {
	b, _ := proto.Marshal(m)
	return fmt.Sprintf("%d bytes: %v", len(b), m)
}

// yangLeaf is an SR Linux / OpenConfig leaf path (full, from qos).
func yangLeaf(r *rand.Rand, port string) []*gnmipb.PathElem {
	e := func(name string, kv ...string) *gnmipb.PathElem {
		pe := &gnmipb.PathElem{Name: name}
		for i := 0; i+1 < len(kv); i += 2 {
			if pe.Key == nil {
				pe.Key = map[string]string{}
			}
			pe.Key[kv[i]] = kv[i+1]
		}
		return pe
	}
	ifc := e("interface", "interface-id", port)
	if r.IntN(10) == 0 {
		ifc = e("interface", "interface-id", port, "subinterface", "0") // two keys
	}
	base := []*gnmipb.PathElem{e("qos"), e("interfaces"), ifc}
	q := r.IntN(8)
	switch r.IntN(6) {
	case 0, 1:
		qn := e("queue", "queue-name", fmt.Sprintf("unicast-%d", q))
		if r.IntN(5) == 0 {
			qn = e("queue", "name", fmt.Sprint(q)) // OpenConfig's key
		}
		stats := []*gnmipb.PathElem{e("queue-statistics"), e("aggregate-statistics")}
		if r.IntN(4) == 0 {
			stats = []*gnmipb.PathElem{e("queue-statistics"), e([]string{"in-profile", "out-profile", "exceed-profile"}[r.IntN(3)])}
		}
		leaf := []string{"transmitted-packets", "dropped-packets", "egq-dropped-packets", "ecn-marked-packets", "dropped-pkts", "ecn-marked-pkts"}[r.IntN(6)]
		return append(append(append(base, e("output"), e("queues"), qn), stats...), e(leaf))
	case 2, 3:
		leaf := []string{"pfc-pause-frames-generated", "pfc-pause-frames-received", "deadlock-recovery-occurrences"}[r.IntN(3)]
		return append(base, e("pfc"), e("statistics"), e("pfc-priority", "index", fmt.Sprint(q)), e(leaf))
	case 4:
		return append(base, e("input"), e("buffer"), e("total-packet-pfc-discards"))
	default:
		return []*gnmipb.PathElem{e("qos"), e("buffer-management"), e("total-packet-pfc-discards")} // no interface key
	}
}

func randomValue(r *rand.Rand) *gnmipb.TypedValue {
	switch r.IntN(14) {
	case 0, 1, 2, 3, 4:
		return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_UintVal{UintVal: r.Uint64() >> r.IntN(64)}}
	case 5:
		return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_IntVal{IntVal: r.Int64N(1000) - 300}}
	case 6:
		return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_StringVal{StringVal: fmt.Sprint(r.Uint64N(1e6))}}
	case 7:
		s := []string{"", "abc", "-1", "+5", "007", "18446744073709551615", "18446744073709551616", "1_000", " 1", "١٢"}[r.IntN(10)]
		return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_StringVal{StringVal: s}}
	case 8:
		return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(fmt.Sprintf(`"%d"`, r.IntN(99)))}}
	case 9:
		return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_BoolVal{BoolVal: true}}
	case 10:
		return &gnmipb.TypedValue{}
	case 11:
		return nil
	case 12:
		return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_DoubleVal{DoubleVal: 3}}
	default:
		return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_UintVal{UintVal: 0}}
	}
}

func mustMarshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// randomResponse builds one response's wire bytes, with the quirks a
// protobuf encoder may produce: fields out of order, unknown fields, a
// singular field sent twice (proto merges), both members of the oneof.
func randomResponse(t *testing.T, r *rand.Rand, ports []string) []byte {
	if r.IntN(15) == 0 {
		b := protowire.AppendTag(nil, fResponseSync, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(r.IntN(2)))
		return b
	}
	// A prefix that takes 0 to 3 leading elements (3: the interface).
	split := r.IntN(4)
	var note []byte
	var prefix *gnmipb.Path
	switch r.IntN(4) {
	case 0:
	case 1:
		prefix = &gnmipb.Path{Target: "t"}
	default:
		prefix = &gnmipb.Path{}
		if r.IntN(3) == 0 {
			prefix.Origin = "openconfig"
		}
	}
	port := ports[r.IntN(len(ports))]
	if prefix != nil && split > 0 {
		full := yangLeaf(r, port)
		if len(full) > split {
			prefix.Elem = full[:split]
		}
	}
	if r.IntN(3) == 0 {
		note = protowire.AppendTag(note, 1, protowire.VarintType) // timestamp
		note = protowire.AppendVarint(note, r.Uint64())
	}
	writePrefix := func() {
		if prefix != nil {
			note = protowire.AppendTag(note, fNotificationPfx, protowire.BytesType)
			note = protowire.AppendBytes(note, mustMarshal(t, prefix))
		}
	}
	prefixFirst := r.IntN(5) != 0
	if prefixFirst {
		writePrefix()
	}
	for range r.IntN(40) {
		if r.IntN(3) == 0 {
			port = ports[r.IntN(len(ports))]
		}
		full := yangLeaf(r, port)
		path := &gnmipb.Path{Elem: full}
		if len(prefix.GetElem()) > 0 {
			if !slices.EqualFunc(full[:min(split, len(full))], prefix.GetElem(), func(a, b *gnmipb.PathElem) bool { return proto.Equal(a, b) }) {
				continue // this leaf is not under the prefix
			}
			path.Elem = full[len(prefix.GetElem()):]
		}
		u := &gnmipb.Update{Path: path, Val: randomValue(r)}
		if r.IntN(20) == 0 {
			u.Duplicates = 2
		}
		ub := mustMarshal(t, u)
		switch r.IntN(40) {
		case 0: // the path twice: proto merges (appends the elems)
			ub = protowire.AppendTag(ub, fUpdatePath, protowire.BytesType)
			ub = protowire.AppendBytes(ub, mustMarshal(t, &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "x"}}}))
		case 1: // the value twice: the last member of the oneof wins
			ub = protowire.AppendTag(ub, fUpdateVal, protowire.BytesType)
			ub = protowire.AppendBytes(ub, mustMarshal(t, randomValue(r)))
		case 2: // an unknown field
			ub = protowire.AppendTag(ub, 15, protowire.VarintType)
			ub = protowire.AppendVarint(ub, 7)
		case 3: // the deprecated Value
			ub = protowire.AppendTag(ub, fUpdateValue, protowire.BytesType)
			//lint:ignore SA1019 what an old target may still send
			ub = protowire.AppendBytes(ub, mustMarshal(t, &gnmipb.Value{Value: []byte("1")}))
		case 4: // val before path
			ub = mustMarshal(t, &gnmipb.Update{Val: u.Val})
			ub = protowire.AppendTag(ub, fUpdatePath, protowire.BytesType)
			ub = protowire.AppendBytes(ub, mustMarshal(t, u.Path))
		}
		note = protowire.AppendTag(note, fNotificationUpd, protowire.BytesType)
		note = protowire.AppendBytes(note, ub)
	}
	for range r.IntN(3) / 2 {
		full := yangLeaf(r, ports[r.IntN(len(ports))])
		note = protowire.AppendTag(note, fNotificationDel, protowire.BytesType)
		note = protowire.AppendBytes(note, mustMarshal(t, &gnmipb.Path{Elem: full[min(len(prefix.GetElem()), len(full)):]}))
	}
	if !prefixFirst {
		writePrefix()
	}
	if r.IntN(30) == 0 { // a second prefix: proto merges the two
		note = protowire.AppendTag(note, fNotificationPfx, protowire.BytesType)
		note = protowire.AppendBytes(note, mustMarshal(t, &gnmipb.Path{Target: "u"}))
	}
	b := protowire.AppendTag(nil, fResponseUpdate, protowire.BytesType)
	b = protowire.AppendBytes(b, note)
	switch r.IntN(40) {
	case 0: // then a sync: the last member of the oneof wins
		b = protowire.AppendTag(b, fResponseSync, protowire.VarintType)
		b = protowire.AppendVarint(b, 1)
	case 1: // an unknown field
		b = protowire.AppendTag(b, 9, protowire.BytesType)
		b = protowire.AppendBytes(b, []byte("x"))
	}
	return b
}

// TestIngestRawMatchesProto: ingestRaw leaves every counter exactly as
// proto.Unmarshal + ingest do, on random SR Linux / OpenConfig-style
// streams with every value type, prefixes of every depth, deletes, ports
// outside the inventory, priorities not in use, and protobuf quirks; two
// switches share the platform's caches as in watch.
func TestIngestRawMatchesProto(t *testing.T) {
	for seed := range uint64(8) {
		r := rand.New(rand.NewPCG(seed, 15))
		plat := intent.PlatformSRLinux
		if seed%2 == 1 {
			plat = intent.PlatformOpenConfig
		}
		p := newPair(plat, [][]string{{"ethernet-1/1", "ethernet-1/2"}, {"ethernet-1/2", "ethernet-1/3"}})
		ports := []string{"ethernet-1/1", "ethernet-1/2", "ethernet-1/3", "ethernet-1/9"}
		for i := range 1500 {
			p.feed(t, r.IntN(2), randomResponse(t, r, ports), fmt.Sprintf("seed %d response %d", seed, i))
		}
	}
}

// TestIngestRawRealStreams: the benchmark's SR Linux and SONiC samples
// (leaf-by-leaf uint64s; whole COUNTERS_DB hashes as JSON), over rounds of
// changing values.
func TestIngestRawRealStreams(t *testing.T) {
	for _, tc := range []struct {
		plat   intent.Platform
		sample func(string, uint64) [][]byte
	}{{intent.PlatformSRLinux, srlSample}, {intent.PlatformSONiC, sonicSample}} {
		ports := []string{portName(tc.plat, 0), portName(tc.plat, 1)}
		p := newPair(tc.plat, [][]string{ports, ports[:1]})
		for round := range uint64(4) {
			for _, port := range append(ports, portName(tc.plat, 7)) {
				for i, msg := range tc.sample(port, round+1) {
					for sw := range 2 {
						p.feed(t, sw, msg, fmt.Sprintf("%s round %d port %s message %d", tc.plat, round, port, i))
					}
				}
			}
		}
		if tc.plat == intent.PlatformSRLinux && len(p.raw[0].shapes.raw) == 0 {
			t.Errorf("SR Linux leaves never took the raw path")
		}
	}
}

// TestIngestRawMalformed: truncated or corrupted bytes are an error
// whenever proto.Unmarshal says so, never a panic, and when proto accepts
// them ingestRaw agrees. (An error ends the session, which resyncs on
// reconnect; the updates before the bad one may have been applied, so
// each case starts from a fresh switch that has seen the valid stream.)
func TestIngestRawMalformed(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ports := []string{"ethernet-1/1", "ethernet-1/2"}
	bad := 0
	for i := range 600 {
		msg := randomResponse(t, r, ports)
		if len(msg) == 0 {
			continue
		}
		p := newPair(intent.PlatformSRLinux, [][]string{ports})
		p.feed(t, 0, msg, fmt.Sprintf("response %d", i)) // warm: the cache holds its leaves
		if i%2 == 0 {
			msg = msg[:r.IntN(len(msg))]
		} else {
			msg = slices.Clone(msg)
			msg[r.IntN(len(msg))] ^= byte(1 + r.IntN(255))
		}
		if err := proto.Unmarshal(msg, &gnmipb.SubscribeResponse{}); err != nil {
			bad++
		}
		p.feed(t, 0, msg, fmt.Sprintf("corrupted response %d", i))
	}
	if bad < 50 {
		t.Fatalf("only %d of 600 corrupted responses were malformed: the test proves little", bad)
	}
}
