package hostdrv

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricctl/fabricctl/hostdrv/internal/dcbnl"
	"github.com/fabricctl/fabricctl/plan"
)

// bufferChanges returns the plan's changes on <if>/buffer paths.
func bufferChanges(p *Plan) []plan.Change {
	var out []plan.Change
	for _, c := range p.Target.Changes {
		if strings.HasSuffix(c.Path, "/buffer") {
			out = append(out, c)
		}
	}
	return out
}

// sentBuffers returns the struct dcbnl_buffer bytes of every IEEE_SET BUFFER
// request the fake kernel received.
func sentBuffers(t *testing.T, k *fakeKernel) [][]byte {
	t.Helper()
	var out [][]byte
	for _, raw := range k.sent {
		_, r, err := dcbnl.ParseMessage(raw)
		if err != nil {
			t.Fatalf("sent request does not parse: %v", err)
		}
		for _, a := range r.Attrs {
			for _, c := range a.Nested {
				if a.Kind() == dcbnl.AttrIEEE && c.Kind() == dcbnl.AttrIEEEBuffer {
					out = append(out, c.Data)
				}
			}
		}
	}
	return out
}

// TestBufferApply: with policy.hostBuffers the layout is written (GET,
// merge, SET the whole struct), sizes the driver rounds down to its cell
// read back in sync, and a second apply writes nothing.
func TestBufferApply(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{})
	for _, n := range r.k.nics {
		// A size the intent leaves to the driver (buffer 2) must survive.
		n.ieee.Buffer.Size[2] = 4096
	}
	f, h := loadIntent(t, withBuffers)
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	got := bufferChanges(p)
	want := []plan.Change{
		{Action: plan.Update, Path: "ens1f0np0/buffer",
			Before: "prio-buffer 0:0 1:0 2:0 3:0 4:0 5:0 6:0 7:0 buffer-size 0:65536 1:0 total-size 524288",
			After:  "prio-buffer 0:0 1:0 2:0 3:1 4:0 5:0 6:0 7:0 buffer-size 0:131072 1:200001",
			// Both checks at plan time: the sum against total_size as read,
			// and the lossless minimum of port_buffer.c calculate_xoff:
			// (301 + 216*3/100) * 400000/1000 + 272*9000/100 = 147280,
			// + max_mtu 9978 + cell 128 = 157386.
			Reason: "policy.hostBuffers; sizes match to within 1024 B: the driver rounds them down to whole buffer cells" +
				"; sizes sum to 335169 B of total_size 524288 B as read" +
				"; lossless buffer 1 needs >= 157386 B (mlx5 calculate_xoff: 400000 Mb/s (link speed), cable 3 m (intent), MTU 9000, max_mtu 9978 (floor 9216), cell 128 B)"},
	}
	if diff := cmp.Diff(want, got[:1]); diff != "" {
		t.Errorf("buffer change (-want +got):\n%s", diff)
	}
	if _, err := r.d.Apply(ctx, p); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	n := r.k.nics["ens1f0np0"]
	wantBuf := dcbnl.Buffer{PrioBuffer: [8]uint8{0, 0, 0, 1}, Size: [8]uint32{131072, 199936, 4096}, Total: fakeBufferTotal}
	if diff := cmp.Diff(wantBuf, *n.ieee.Buffer); diff != "" {
		t.Errorf("buffer after apply (-want +got):\n%s", diff)
	}
	// The SET request, laid out as struct dcbnl_buffer (include/uapi/linux/
	// dcbnl.h): u8 prio2buffer[8] at 0, u32 buffer_size[8] at 8, u32
	// total_size at 40 (echoed as read, as dcb buffer set does), 44 bytes,
	// host byte order.
	// mlx5 (BufferSizesFirst): sizes with the old prio2buffer first, so
	// buffer 1 is large enough before the PFC priority 3 moves into it.
	sent := sentBuffers(t, r.k)
	if len(sent) != 4 {
		t.Fatalf("%d BUFFER requests sent, want 4 (sizes, then prio2buffer, per NIC)", len(sent))
	}
	if diff := cmp.Diff(make([]byte, 8), sent[0][:8]); diff != "" {
		t.Errorf("first request's prio2buffer (-want +got; sizes go first with the observed mapping):\n%s", diff)
	}
	if diff := cmp.Diff(sent[0][8:], sent[1][8:]); diff != "" {
		t.Errorf("the two requests' sizes differ (-first +second):\n%s", diff)
	}
	b := sent[1]
	if len(b) != 44 {
		t.Fatalf("dcbnl_buffer is %d bytes, want 44", len(b))
	}
	if diff := cmp.Diff([]byte{0, 0, 0, 1, 0, 0, 0, 0}, b[:8]); diff != "" {
		t.Errorf("prio2buffer bytes (-want +got):\n%s", diff)
	}
	var sizes [8]uint32
	for i := range sizes {
		sizes[i] = binary.NativeEndian.Uint32(b[8+4*i:])
	}
	if diff := cmp.Diff([8]uint32{131072, 200001, 4096}, sizes); diff != "" {
		t.Errorf("buffer_size (-want +got; the unmanaged buffer 2 keeps its observed size):\n%s", diff)
	}
	if tot := binary.NativeEndian.Uint32(b[40:]); tot != fakeBufferTotal {
		t.Errorf("total_size sent = %d, want %d as read (iproute2 dcb_cmd_buffer_set sends the struct it got)", tot, fakeBufferTotal)
	}

	w := r.writes()
	p2, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range bufferChanges(p2) {
		if c.Action != plan.NoOp {
			t.Errorf("second plan: %s %v %q -> %q; want in sync (199936 is 200001 in whole 128 B cells)", c.Path, c.Action, c.Before, c.After)
		}
	}
	if _, err := r.d.Apply(ctx, p2); err != nil {
		t.Fatalf("second Apply: %v", err)
	}
	if got := r.writes() - w; got != 0 {
		t.Errorf("second apply wrote %d times, want 0", got)
	}

	// Drift: someone moves priority 3 back to buffer 0.
	n.ieee.Buffer.PrioBuffer[3] = 0
	p3, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	if c := bufferChanges(p3); len(c) == 0 || c[0].Action != plan.Update {
		t.Errorf("drifted prio2buffer: changes %+v, want an update of ens1f0np0/buffer", c)
	}
}

// TestBufferSizeLeftToDriver: a buffer without a size in the intent only
// moves priorities; every size sent is the observed one.
func TestBufferSizeLeftToDriver(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{})
	for _, n := range r.k.nics {
		n.ieee.Buffer.Size[1] = fakeCell * 1536 // room for the lossless priority 3 at 400G
	}
	f, h := loadIntent(t, func(s string) string {
		return strings.Replace(s, "  dcbx: host-static\n", "  dcbx: host-static\n  hostBuffers:\n    - {buffer: 1, priorities: [3]}\n", 1)
	})
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	if c := bufferChanges(p); len(c) != 2 || c[0].After != "prio-buffer 0:0 1:0 2:0 3:1 4:0 5:0 6:0 7:0" {
		t.Fatalf("buffer changes %+v, want one per NIC moving priority 3 only", c)
	}
	if _, err := r.d.Apply(ctx, p); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	want := dcbnl.Buffer{PrioBuffer: [8]uint8{0, 0, 0, 1}, Size: [8]uint32{fakeCell * 512, fakeCell * 1536}, Total: fakeBufferTotal}
	if diff := cmp.Diff(want, *r.k.nics["ens1f0np0"].ieee.Buffer); diff != "" {
		t.Errorf("buffer after apply (-want +got):\n%s", diff)
	}
	if n := len(sentBuffers(t, r.k)); n != 2 {
		t.Errorf("%d BUFFER requests, want 2 (one per NIC: no size changes, nothing to split)", n)
	}
}

// TestBufferLosslessTooSmall: moving a PFC priority into a buffer smaller
// than mlx5's lossless minimum (port_buffer.c update_xoff_threshold: the
// driver answers ENOMEM) is refused at plan time, naming the interface,
// the buffer and both sizes, and apply writes nothing.
func TestBufferLosslessTooSmall(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{})
	f, h := loadIntent(t, func(s string) string {
		return strings.Replace(s, "  dcbx: host-static\n", "  dcbx: host-static\n  hostBuffers:\n    - {buffer: 1, priorities: [3]}\n", 1)
	})
	p, err := r.d.Plan(ctx, f, h)
	if err == nil || !strings.Contains(err.Error(), "ens1f0np0: buffer: lossless buffer 1 of 0 B is below mlx5's minimum 157386 B") {
		t.Fatalf("Plan error = %v, want one naming ens1f0np0's buffer 1 and the minimum", err)
	}
	res, err := r.d.ApplyWith(ctx, p, ApplyOptions{})
	if err == nil || res.Written() != 0 || r.writes() != 0 {
		t.Errorf("ApplyWith = %v, %d steps written, %d writes; want an error and nothing written", err, res.Written(), r.writes())
	}
}

// TestBufferNilLeavesBuffersAlone: without policy.hostBuffers the buffer is
// neither planned nor written, whatever the NIC has.
func TestBufferNilLeavesBuffersAlone(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{})
	for _, n := range r.k.nics {
		n.ieee.Buffer.PrioBuffer = [8]uint8{1, 1, 1, 1, 1, 1, 1, 1}
	}
	f, h := loadIntent(t, nil)
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	if c := bufferChanges(p); len(c) != 0 {
		t.Errorf("buffer changes without policy.hostBuffers: %+v", c)
	}
	if _, err := r.d.Apply(ctx, p); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if n := len(sentBuffers(t, r.k)); n != 0 {
		t.Errorf("%d BUFFER requests sent without policy.hostBuffers, want 0", n)
	}
}

// TestBufferUnsupported: a driver that reports no BUFFER object gets a
// note, no step, and apply neither fails nor retries every run.
func TestBufferUnsupported(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{driver: "ice", configfs: true})
	for _, n := range r.k.nics {
		n.mlx5 = false
		n.ieee.Buffer = nil
	}
	f, h := loadIntent(t, withBuffers)
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	if c := bufferChanges(p); len(c) != 0 {
		t.Errorf("buffer changes on a driver without buffer support: %+v", c)
	}
	note := false
	for _, n := range p.Target.Notes {
		if strings.HasPrefix(n, "ens1f0np0: the driver reports no receive buffer layout") {
			note = true
		}
	}
	if !note {
		t.Errorf("no note about the missing buffer support; notes: %q", p.Target.Notes)
	}
	if _, err := r.d.Apply(ctx, p); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	w := r.writes()
	p2, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.d.Apply(ctx, p2); err != nil {
		t.Fatalf("second Apply: %v", err)
	}
	if got := r.writes() - w; got != 0 || len(sentBuffers(t, r.k)) != 0 {
		t.Errorf("second apply wrote %d times, BUFFER requests %d; want 0, 0", got, len(sentBuffers(t, r.k)))
	}
}

// TestBufferMatches: the generic backend compares sizes exactly; mlx5
// accepts a read-back below the wanted size by less than its cell bound.
func TestBufferMatches(t *testing.T) {
	want := Buffer{PrioBuffer: [8]uint8{0, 0, 0, 1}, Size: [8]uint32{0, 200001}}
	tests := []struct {
		name string
		have uint32
		cell uint32
		ok   bool
	}{
		{"exact", 200001, 0, true},
		{"rounded, exact compare", 199936, 0, false},
		{"rounded to 128 B cells", 199936, mlx5BufferCellMax, true},
		{"rounded to 1 KiB cells", 199680, mlx5BufferCellMax, true},
		{"too small", 98977, mlx5BufferCellMax, false},
		{"larger", 100129, mlx5BufferCellMax, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			have := want
			have.Size[1] = tc.have
			if got := want.matches(have, tc.cell); got != tc.ok {
				t.Errorf("matches(%d, cell %d) = %v, want %v", tc.have, tc.cell, got, tc.ok)
			}
		})
	}
}

// TestBufferGenericOneRequest: the generic backend sends the whole layout in
// one request (what `dcb buffer set` with both arguments sends), compares
// sizes exactly, and converges.
func TestBufferGenericOneRequest(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, treeOpts{driver: "ice", configfs: true})
	for _, n := range r.k.nics {
		n.mlx5 = false
	}
	f, h := loadIntent(t, withBuffers)
	p, err := r.d.Plan(ctx, f, h)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range p.Steps {
		if strings.HasPrefix(s.Command, "dcb buffer ") {
			got = append(got, s.Command)
		}
	}
	want := []string{
		"dcb buffer set dev ens1f0np0 prio-buffer 0:0 1:0 2:0 3:1 4:0 5:0 6:0 7:0 buffer-size 0:131072 1:200001",
		"dcb buffer set dev ens1f1np1 prio-buffer 0:0 1:0 2:0 3:1 4:0 5:0 6:0 7:0 buffer-size 0:131072 1:200001",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("buffer commands (-want +got):\n%s", diff)
	}
	after, err := r.d.Apply(ctx, p)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if c := bufferChanges(after); len(c) != 2 || c[0].Action != plan.NoOp {
		t.Errorf("read-back buffer changes %+v, want in sync", c)
	}
	if got := r.k.nics["ens1f0np0"].ieee.Buffer.Size[1]; got != 200001 {
		t.Errorf("buffer 1 size = %d, want 200001 (no rounding outside mlx5)", got)
	}
}
