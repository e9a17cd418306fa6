package intent

// RoCEMode is how a fabric keeps RoCE traffic from being lost (or
// recovers it): policy.mode.
//
// The names follow the vendors that name the modes: NVIDIA Cumulus NVUE's
// `nv set qos roce mode lossless|lossy` ("RDMA over Converged Ethernet -
// RoCE", Cumulus Linux 5.x) and NVIDIA Onyx's `roce
// lossless|semi-lossless|lossy` (Onyx User Manual, "RoCE Commands"); PFC
// without DCQCN is the design Meta describes in "RDMA over Ethernet for
// Distributed AI Training at Meta Scale" (SIGCOMM 2024).
type RoCEMode string

// The modes.
const (
	// ModeLossless is PFC on the lossless classes' priorities, sent and
	// honoured by switches and hosts, plus ECN marking for DCQCN: the
	// classic design and the default.
	ModeLossless RoCEMode = "lossless"
	// ModeLossy is ECN marking only: no PFC anywhere (switches and
	// hosts), the NIC retransmits what the fabric drops (go-back-N on
	// ConnectX unless selective repeat is on). NVUE's and Onyx's lossy.
	ModeLossy RoCEMode = "lossy"
	// ModeSemiLossless: hosts send PFC pause, switches honour the pause
	// they receive (stop the egress queue) but never send pause
	// themselves, so pause does not propagate through the fabric: a
	// switch buffer that fills drops. Onyx's semi-lossless ("pause RX
	// compliant, no pause propagation").
	ModeSemiLossless RoCEMode = "semi-lossless"
	// ModePFCOnly is PFC as in lossless but no ECN marking on any
	// switch queue and no DCQCN on the hosts: congestion is left to PFC
	// (and the workload's own admission control).
	ModePFCOnly RoCEMode = "pfc-only"
)

// Modes lists the mode names, the default first.
func Modes() []string {
	return []string{string(ModeLossless), string(ModeLossy), string(ModeSemiLossless), string(ModePFCOnly)}
}

// PresetRoCELossy is the roce-lossless preset's classes in lossy mode:
// NVIDIA's `nv set qos roce mode lossy` (same DSCP trust, priorities, ETS
// and ECN on TC 3; no PFC). It makes lossy the default mode.
const PresetRoCELossy = "roce-lossy"

// The mode's methods take the zero RoCEMode (a Policy built in code
// rather than parsed) as the default, lossless.

// PFC reports whether the mode has PFC anywhere (hosts or switches).
func (m RoCEMode) PFC() bool { return m != ModeLossy }

// SwitchSendsPause reports whether switches generate PFC pause on the
// lossless priorities (and so need headroom and an XOFF point): lossless
// and pfc-only. In semi-lossless a switch only honours received pause.
func (m RoCEMode) SwitchSendsPause() bool { return m == ModeLossless || m == "" || m == ModePFCOnly }

// ECN reports whether the mode marks ECN on switch queues (and runs
// DCQCN on hosts): every mode but pfc-only.
func (m RoCEMode) ECN() bool { return m != ModePFCOnly }

// Lossy reports whether the policy is in lossy mode.
func (p *Policy) Lossy() bool { return p.Mode == ModeLossy }

// applyMode makes the preset's classes say what the mode says: lossy turns
// PFC off on them, pfc-only turns their ECN off. A class the intent writes
// overrides the result field by field afterwards, and check reports a
// class whose own `lossless:` or `ecn:` contradicts the mode.
func applyMode(m RoCEMode, classes []Class) {
	for i := range classes {
		if !m.PFC() {
			classes[i].Lossless = false
		}
		if !m.ECN() {
			classes[i].ECN = nil
		}
	}
}
