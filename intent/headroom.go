package intent

import "fmt"

// Headroom models. Each returns the XOFF headroom in bytes that one lossless
// priority of one port needs to absorb what is still in flight after it sends
// a pause frame. Sources (see DOMAIN.md section 4):
//
//   - IEEE 802.1Qbb delay model (as laid out in Cisco's "Congestion management
//     in Ethernet storage networks", ch. 7): max frame at the receiver + pause
//     frame + 2 x interface delay + 2 x cable delay + peer response + max frame
//     at the sender, all in bit times.
//   - SONiC dynamic buffer calculation (buffer_check_headroom /
//     calculate_headroom in sonic-swss buffer_headroom_*.lua).
//   - mlx5 NIC driver (port_buffer.c: calculate_xoff).
//   - the switch vendor's own table for the ASIC (headroom_asic.go), when
//     the input names one.

// HeadroomModel names one of the models.
type HeadroomModel string

const (
	ModelIEEE  HeadroomModel = "ieee-802.1qbb"
	ModelSONiC HeadroomModel = "sonic-dynamic"
	ModelMLX5  HeadroomModel = "mlx5-driver"
)

// HeadroomInput is what every model takes.
type HeadroomInput struct {
	Speed       int64   // bits/s
	CableMeters float64 // metres
	// MTU is the port's IP MTU in bytes, as everywhere in the intent; a
	// model that counts whole frames adds the Ethernet framing itself.
	MTU int
	// CellFactor multiplies the in-flight bytes for cell occupancy (SONiC);
	// 0 means 1. Small packets can make it ~2.
	CellFactor float64
	// ASIC, when set and known (LookupASIC), adds the vendor's lookup
	// table as a fourth model (HeadroomVendor).
	ASIC string
}

// HeadroomResult is one model's answer.
type HeadroomResult struct {
	Model HeadroomModel
	Bytes int64
	// Terms is the breakdown (name -> bytes), in the order the model adds them.
	Terms []HeadroomTerm
}

// HeadroomTerm is one addend of a model.
type HeadroomTerm struct {
	Name  string
	Bytes float64
}

// PauseQuanta is the peer response time in pause quanta (512 bit times) per
// speed, from DOMAIN.md section 4 (SONiC pg_profile_lookup / Broadcom tables).
func PauseQuanta(speed int64) int {
	switch g := speed / 1_000_000_000; {
	case g >= 400:
		return 905
	case g >= 200:
		return 453
	case g >= 100:
		return 394
	case g >= 50:
		return 147
	case g >= 40:
		return 118
	case g >= 25:
		return 80
	default:
		return 67
	}
}

// interfaceDelayBT is the IEEE 802.3 upper bound of one interface's delay in
// bit times. Published: 10G 8192, 25G 6144, 40G 24576, 100G 122880. No figure
// is published for 50G and 200G/400G/800G; we use the next lower published
// speed's value (an assumption the headroom command prints).
func interfaceDelayBT(speed int64) float64 {
	switch g := speed / 1_000_000_000; {
	case g >= 100:
		return 122880
	case g >= 40:
		return 24576
	case g >= 25:
		return 6144
	default:
		return 8192
	}
}

// frame overhead on the wire beyond the MTU: inter-frame gap 12 B + preamble/SFD 8 B.
const wireOverhead = 20

// ethFraming is what an Ethernet frame adds to its IP packet at most:
// destination and source MAC and EtherType (14 B), one 802.1Q tag (4 B, a
// priority-tagged RoCE frame carries one) and the FCS (4 B). IEEE 802.1Qbb
// Annex N's "maximum frame" is the frame, not the IP packet.
const ethFraming = 22

// HeadroomIEEE is the IEEE 802.1Qbb delay model.
func HeadroomIEEE(in HeadroomInput) HeadroomResult {
	bt := float64(in.Speed) // bit times per second
	maxFrame := float64(in.MTU+ethFraming+wireOverhead) * 8
	cable := 2 * 5e-9 * in.CableMeters * bt // 5 ns/m, both directions
	resp := float64(PauseQuanta(in.Speed)) * 512
	terms := []HeadroomTerm{
		{"max frame (receiver)", maxFrame / 8},
		{"pause frame", 672.0 / 8},
		{"2 x interface delay", 2 * interfaceDelayBT(in.Speed) / 8},
		{"2 x cable delay", cable / 8},
		{"peer response", resp / 8},
		{"max frame (sender)", maxFrame / 8},
	}
	return sum(ModelIEEE, terms)
}

// HeadroomSONiC is SONiC's dynamic buffer xoff:
// lossless MTU + (port MTU + bytes on cable + peer response) x cell occupancy.
func HeadroomSONiC(in HeadroomInput) HeadroomResult {
	cf := in.CellFactor
	if cf == 0 {
		cf = 1
	}
	onCable := 2 * in.CableMeters * float64(in.Speed) / 198_000_000 / 8
	resp := float64(PauseQuanta(in.Speed)) * 64
	terms := []HeadroomTerm{
		{"lossless MTU", float64(in.MTU)},
		{"port MTU x cell", float64(in.MTU) * cf},
		{"bytes on cable x cell", onCable * cf},
		{"peer response x cell", resp * cf},
	}
	return sum(ModelSONiC, terms)
}

// HeadroomMLX5 is the mlx5 driver's xoff: (301 + 2.16 x L) x speed[Gb/s] + 2.72 x MTU,
// with the speed floored at 40G.
func HeadroomMLX5(in HeadroomInput) HeadroomResult {
	g := float64(in.Speed) / 1e9
	if g < 40 {
		g = 40
	}
	terms := []HeadroomTerm{
		{"(301 + 2.16 x cable) x speed", (301 + 2.16*in.CableMeters) * g},
		{"2.72 x MTU", 2.72 * float64(in.MTU)},
	}
	return sum(ModelMLX5, terms)
}

func sum(m HeadroomModel, terms []HeadroomTerm) HeadroomResult {
	var t float64
	for _, x := range terms {
		t += x.Bytes
	}
	return HeadroomResult{Model: m, Bytes: int64(t), Terms: terms}
}

// Headroom runs the three published models, and the vendor's table when
// in.ASIC has one, and returns them with the largest, which is what a port
// must provide.
func Headroom(in HeadroomInput) (all []HeadroomResult, required int64) {
	all = []HeadroomResult{HeadroomIEEE(in), HeadroomSONiC(in), HeadroomMLX5(in)}
	if v, ok := HeadroomVendor(in); ok {
		all = append(all, v)
	}
	for _, r := range all {
		if r.Bytes > required {
			required = r.Bytes
		}
	}
	return all, required
}

// HeadroomAssumptions returns the caveats that apply to in (printed by the
// headroom command so the numbers can be judged).
func HeadroomAssumptions(in HeadroomInput) []string {
	var out []string
	g := in.Speed / 1_000_000_000
	switch {
	case g > 100:
		out = append(out, fmt.Sprintf("IEEE interface delay: no published bound for %dG; the 100G bound (122880 bit times) is used", g))
	case g == 50:
		out = append(out, "IEEE interface delay: no published bound for 50G; the 40G bound (24576 bit times) is used")
	}
	if in.Speed < 40_000_000_000 {
		out = append(out, "mlx5: the driver floors the speed at 40G")
	}
	return append(out, vendorAssumptions(in)...)
}
