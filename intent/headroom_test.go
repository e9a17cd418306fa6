package intent

import "testing"

func TestHeadroomPublishedFigures(t *testing.T) {
	tests := []struct {
		name  string
		model func(HeadroomInput) HeadroomResult
		in    HeadroomInput
		want  int64 // from DOMAIN.md section 4
		tol   int64
	}{
		{"ieee 100G 100m", HeadroomIEEE, HeadroomInput{Speed: 100e9, CableMeters: 100, MTU: 9216}, 87000, 500},
		{"sonic 100G 100m", HeadroomSONiC, HeadroomInput{Speed: 100e9, CableMeters: 100, MTU: 9216}, 56000, 500},
		{"sonic 400G 100m", HeadroomSONiC, HeadroomInput{Speed: 400e9, CableMeters: 100, MTU: 9216}, 127000, 500},
		{"mlx5 100G 100m", HeadroomMLX5, HeadroomInput{Speed: 100e9, CableMeters: 100, MTU: 9216}, 76767, 0},
		{"mlx5 400G 100m", HeadroomMLX5, HeadroomInput{Speed: 400e9, CableMeters: 100, MTU: 9216}, 231867, 0},
	}
	for _, tt := range tests {
		got := tt.model(tt.in).Bytes
		if d := got - tt.want; d > tt.tol || d < -tt.tol {
			t.Errorf("%s: got %d bytes, want %d ± %d", tt.name, got, tt.want, tt.tol)
		}
	}
}

func TestHeadroomRequiredIsMax(t *testing.T) {
	all, req := Headroom(HeadroomInput{Speed: 400e9, CableMeters: 100, MTU: 9216})
	for _, r := range all {
		if r.Bytes > req {
			t.Errorf("model %s = %d exceeds required %d", r.Model, r.Bytes, req)
		}
	}
	if req != HeadroomMLX5(HeadroomInput{Speed: 400e9, CableMeters: 100, MTU: 9216}).Bytes {
		t.Errorf("at 400G/100m the mlx5 model should dominate, got required %d", req)
	}
	// Monotonic in cable length.
	_, short := Headroom(HeadroomInput{Speed: 100e9, CableMeters: 3, MTU: 9216})
	_, long := Headroom(HeadroomInput{Speed: 100e9, CableMeters: 300, MTU: 9216})
	if short >= long {
		t.Errorf("headroom not increasing with cable length: 3m=%d 300m=%d", short, long)
	}
}

// The intent's MTU is the IP MTU; IEEE 802.1Qbb Annex N's two "max frame"
// terms are whole frames on the wire: IP MTU + 14 B header + 4 B 802.1Q tag +
// 4 B FCS, plus 20 B of inter-frame gap and preamble. Counting the IP MTU as
// the frame undercounts the headroom by 44 B.
func TestHeadroomIEEEMaxFrameIsTheTaggedFrameOnTheWire(t *testing.T) {
	r := HeadroomIEEE(HeadroomInput{Speed: 100e9, CableMeters: 100, MTU: 9216})
	want := float64(9216 + 14 + 4 + 4 + 12 + 8)
	var frames int
	for _, term := range r.Terms {
		if term.Name == "max frame (receiver)" || term.Name == "max frame (sender)" {
			frames++
			if term.Bytes != want {
				t.Errorf("%s = %.0f B, want %.0f B (IP MTU 9216 + Ethernet framing + IFG/preamble)", term.Name, term.Bytes, want)
			}
		}
	}
	if frames != 2 {
		t.Fatalf("IEEE model has %d max-frame terms, want 2: %+v", frames, r.Terms)
	}
}
