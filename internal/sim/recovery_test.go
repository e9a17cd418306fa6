package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/intent"
)

// lossyIntent is the preset with the RoCE class not lossless: ECN and
// DCQCN only, RoCE RC retransmits what the switch drops.
const lossyIntent = minimalIntent + `  classes:
    - {name: roce, lossless: false}
`

// TestLosslessVsLossyIncast: the same 16:1 incast of 1 MB messages.
// Lossless: PFC holds it, nothing dropped or resent, every message
// completes. Lossy: the switch tail-drops at DefaultLossyLimit, go-back-N
// resends, every message still completes (with a local ACK timeout of
// exponent 8, 1.05 ms, above the queueing delay), and the bytes balance
// with the resends counted.
func TestLosslessVsLossyIncast(t *testing.T) {
	opt := Options{Duration: 10 * time.Millisecond, AckTimeout: AckTimeout(8)}
	sc := func() *Scenario {
		sc, err := ParseSpec("incast:16:1")
		if err != nil {
			t.Fatal(err)
		}
		sc.Size = 1_000_000
		return sc
	}
	ll := runSc(t, parse(t, minimalIntent), sc(), StarOptions{Speed: 100e9}, opt)
	if d := ll.Totals(true).Drops; d != 0 {
		t.Errorf("lossless: %d drops", d)
	}
	if ll.Recovery.Flows != 0 || ll.Recovery.RetransmittedBytes != 0 {
		t.Errorf("lossless: recovery %+v, want none", ll.Recovery)
	}
	if ll.FCT.Flows != 16 || ll.FCT.Finished != 16 {
		t.Fatalf("lossless: FCT %+v, want 16 of 16 finished", ll.FCT)
	}
	if ll.Totals(true).PausedTime == 0 {
		t.Errorf("lossless: no pause, the incast did not congest")
	}

	lo := runSc(t, parse(t, lossyIntent), sc(), StarOptions{Speed: 100e9}, opt)
	if lo.Totals(true) != (PrioStats{}) {
		t.Errorf("lossy: lossless counters moved: %+v", lo.Totals(true))
	}
	tot := lo.Totals(false)
	if tot.Drops == 0 || tot.PausedTime != 0 {
		t.Fatalf("lossy: %d drops, paused %v; want drops and no pause", tot.Drops, tot.PausedTime)
	}
	rc := lo.Recovery
	if rc.Mode != RecoveryGoBackN || rc.Flows != 16 || rc.RetransmittedBytes == 0 || rc.NAKs == 0 || rc.OutOfSequence == 0 {
		t.Errorf("lossy: recovery %+v, want go-back-N resending after NAKs", rc)
	}
	if lo.FCT.Finished != 16 {
		t.Errorf("lossy: %d of 16 messages finished (%+v)", lo.FCT.Finished, rc)
	}
	for _, f := range lo.Flows {
		if f.Finished && f.Received != f.Size {
			t.Errorf("flow %d: received %d of %d", f.ID, f.Received, f.Size)
		}
	}
	if lo.Conservation.Discarded == 0 {
		t.Errorf("go-back-N discarded nothing: %+v", lo.Conservation)
	}
}

// lossRun runs one 1 MB message h1 -> h2 on the lossy class, dropping
// the PSNs in drop once each.
func lossRun(t *testing.T, rec Recovery, timeout Time, drop ...int64) *Result {
	t.Helper()
	f := parse(t, lossyIntent)
	sc, err := ParseScenarioYAML("one.yaml", []byte("flows:\n  - {from: h1, to: h2, size: 1MB}\n"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := Build(Star(f, 2, StarOptions{Speed: 100e9}), sc, StarOptions{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := New(n, Options{Duration: time.Millisecond, Recovery: rec, AckTimeout: timeout})
	left := map[int64]bool{}
	for _, p := range drop {
		left[p] = true
	}
	s.lose = func(_ *flow, psn int64) bool {
		if left[psn] {
			delete(left, psn)
			return true
		}
		return false
	}
	r := s.Run()
	if !r.Conservation.Holds() {
		t.Fatalf("%s: conservation broken: %+v", rec, r.Conservation)
	}
	if len(left) > 0 {
		t.Fatalf("%s: PSNs %v never sent", rec, left)
	}
	if !r.Flows[0].Finished || r.Flows[0].Received != 1_000_000 {
		t.Fatalf("%s: flow %+v did not complete", rec, r.Flows[0])
	}
	return r
}

// TestGoBackNResendsMoreThanSelectiveRepeat: the same three losses in one
// message. Selective repeat resends exactly the lost packets; go-back-N
// resends every packet from each gap on that was in flight when the NAK
// came back, and discards them at the responder.
func TestGoBackNResendsMoreThanSelectiveRepeat(t *testing.T) {
	frame := int64(4096 + roceHeaders + wireOverhead)
	gbn := lossRun(t, RecoveryGoBackN, 0, 10, 11, 100)
	sr := lossRun(t, RecoverySelectiveRepeat, 0, 10, 11, 100)
	if got := sr.Recovery.RetransmittedBytes; got != 3*frame {
		t.Errorf("selective repeat resent %d B, want the 3 lost frames (%d B)", got, 3*frame)
	}
	if sr.Recovery.Discarded != 0 || sr.Recovery.Timeouts != 0 {
		t.Errorf("selective repeat: %+v", sr.Recovery)
	}
	if gbn.Recovery.RetransmittedBytes <= sr.Recovery.RetransmittedBytes {
		t.Errorf("go-back-N resent %d B, selective repeat %d B: want more", gbn.Recovery.RetransmittedBytes, sr.Recovery.RetransmittedBytes)
	}
	if gbn.Recovery.Discarded == 0 || gbn.Recovery.NAKs != 2 {
		t.Errorf("go-back-N: %+v, want 2 NAKs (one per gap) and discards", gbn.Recovery)
	}
	if gbn.Recovery.GoodputLoss <= sr.Recovery.GoodputLoss {
		t.Errorf("goodput loss: go-back-N %.4f, selective repeat %.4f", gbn.Recovery.GoodputLoss, sr.Recovery.GoodputLoss)
	}
	if gbn.FCT.Median <= sr.FCT.Median {
		t.Errorf("FCT: go-back-N %v, selective repeat %v", gbn.FCT.Median, sr.FCT.Median)
	}
	// the hosts' RDMA counters as mlx5 names them
	hc := gbn.HostRDMACounters()
	if hc["h1"]["packet_seq_err"] != 2 || hc["h2"]["out_of_sequence"] == 0 || hc["h2"]["out_of_sequence"] != gbn.Flows[0].OutOfSequence || hc["h1"]["out_of_sequence"] != 0 {
		t.Errorf("go-back-N host counters %v", hc)
	}
	clean := lossRun(t, RecoveryGoBackN, 0)
	if clean.Recovery.RetransmittedBytes != 0 || clean.FCT.Median >= sr.FCT.Median {
		t.Errorf("no loss: %+v, FCT %v (selective repeat with losses %v)", clean.Recovery, clean.FCT.Median, sr.FCT.Median)
	}
}

// TestTailLossNeedsTheTimeout: the message's last packet lost leaves no
// later packet to reveal the gap: only the local ACK timer recovers it,
// one timeout later, by resending from the last cumulative ACK on (the
// responder discards what it already has).
func TestTailLossNeedsTheTimeout(t *testing.T) {
	const rto = 50 * Microsecond
	last := int64((1_000_000+4095)/4096 - 1)
	resend := last - last/ackCoalesce*ackCoalesce + 1
	for _, rec := range Recoveries() {
		r := lossRun(t, rec, rto, last)
		if r.Recovery.Timeouts != 1 || r.Recovery.NAKs != 0 || r.Recovery.RetransmittedPackets != resend {
			t.Errorf("%s: %+v, want one timeout and %d packets resent", rec, r.Recovery, resend)
		}
		if hc := r.HostRDMACounters(); hc["h1"]["local_ack_timeout_err"] != 1 || hc["h2"]["duplicate_request"] != resend-1 {
			t.Errorf("%s: host counters %v, want 1 timeout at h1 and %d duplicates at h2", rec, hc, resend-1)
		}
		if r.Recovery.Discarded != (resend-1)*int64(4096+roceHeaders+wireOverhead) {
			t.Errorf("%s: discarded %d B, want the %d duplicates", rec, r.Recovery.Discarded, resend-1)
		}
		if r.Flows[0].FCT < rto {
			t.Errorf("%s: FCT %v shorter than the timeout %v", rec, r.Flows[0].FCT, rto)
		}
	}
}

// TestAckTimeout: IBTA's 4.096 us x 2^exp; perftest's 14 is 67.1 ms.
func TestAckTimeout(t *testing.T) {
	for _, tc := range []struct {
		exp  int
		want Time
	}{{0, 0}, {1, 8192 * Nanosecond}, {14, 67_108_864 * Nanosecond}, {32, 0}} {
		if got := AckTimeout(tc.exp); got != tc.want {
			t.Errorf("AckTimeout(%d) = %v, want %v", tc.exp, got, tc.want)
		}
	}
}

// TestFCTPercentiles: nearest rank over the flows with a size; a flow
// still running counts with its time so far and marks the percentile as
// a lower bound.
func TestFCTPercentiles(t *testing.T) {
	us := Microsecond
	fin := func(fct Time) FlowResult { return FlowResult{Size: 1, Finished: true, FCT: fct} }
	run := func(start Time) FlowResult { return FlowResult{Size: 1, StartTime: start} }
	hundred := make([]FlowResult, 0, 100)
	for i := 100; i >= 1; i-- {
		hundred = append(hundred, fin(Time(i)*us))
	}
	for _, tc := range []struct {
		name  string
		flows []FlowResult
		want  FCTSummary
	}{
		{"none", nil, FCTSummary{}},
		{"no sizes", []FlowResult{{Finished: false}}, FCTSummary{}},
		{"one", []FlowResult{fin(7 * us)}, FCTSummary{Flows: 1, Finished: 1, Median: 7 * us, P99: 7 * us, Max: 7 * us}},
		{"two: lower median", []FlowResult{fin(9 * us), fin(3 * us)}, FCTSummary{Flows: 2, Finished: 2, Median: 3 * us, P99: 9 * us, Max: 9 * us}},
		{"odd", []FlowResult{fin(5 * us), fin(1 * us), fin(3 * us)}, FCTSummary{Flows: 3, Finished: 3, Median: 3 * us, P99: 5 * us, Max: 5 * us}},
		{"1..100", hundred, FCTSummary{Flows: 100, Finished: 100, Median: 50 * us, P99: 99 * us, Max: 100 * us}},
		{"unfinished is the tail", []FlowResult{fin(1 * us), fin(2 * us), run(990 * us)}, FCTSummary{Flows: 3, Finished: 2, Median: 2 * us, P99: 10 * us, P99AtLeast: true, Max: 10 * us, MaxAtLeast: true}},
		{"majority unfinished", []FlowResult{fin(50 * us), run(0), run(0)}, FCTSummary{Flows: 3, Finished: 1, Median: 1000 * us, MedianAtLeast: true, P99: 1000 * us, P99AtLeast: true, Max: 1000 * us, MaxAtLeast: true}},
	} {
		if got := fctSummary(tc.flows, 1000*us); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if got := Percentile([]Time{4, 1, 3, 2}, 50); got != 2 {
		t.Errorf("Percentile median of 1..4 = %d, want 2", got)
	}
	if got := Percentile([]Time{4, 1, 3, 2}, 75); got != 3 {
		t.Errorf("Percentile p75 of 1..4 = %d, want 3", got)
	}
	if got := Percentile(nil, 99); got != 0 {
		t.Errorf("Percentile of nothing = %d", got)
	}
}

// TestSendWindow: a QP waiting on a lost resend (only the timer, 2 ms
// here, can recover it) stops at perftest's 128 x 64 KiB outstanding
// instead of sending for the whole run.
func TestSendWindow(t *testing.T) {
	f := parse(t, lossyIntent)
	sc, err := ParseScenarioYAML("one.yaml", []byte("flows:\n  - {from: h1, to: h2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := Build(Star(f, 2, StarOptions{Speed: 100e9}), sc, StarOptions{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := New(n, Options{Duration: time.Millisecond, AckTimeout: 2 * Millisecond})
	drops := 0
	s.lose = func(_ *flow, psn int64) bool {
		if psn == 10 && drops < 2 {
			drops++
			return true
		}
		return false
	}
	r := s.Run()
	if !r.Conservation.Holds() {
		t.Fatalf("conservation: %+v", r.Conservation)
	}
	window := int64(sendWindow / 4096)
	if got, want := r.Flows[0].Sent, (10+window)*4096; drops != 2 || got != want {
		t.Errorf("%d drops; sent %d B of new data, want %d (PSN 10 + the window of %d packets)", drops, got, want, window)
	}
	if r.Recovery.NAKs != 1 || r.Recovery.Timeouts != 0 {
		t.Errorf("recovery %+v: want the one NAK, no timeout within the run", r.Recovery)
	}
}

// TestWithMode: the RoCE class as each mode sets it up, the intent itself
// untouched, the policy's mode set; an unknown mode is refused.
func TestWithMode(t *testing.T) {
	f := parse(t, minimalIntent)
	for _, tc := range []struct {
		mode          string
		lossless, ecn bool
	}{{ModeLossless, true, true}, {ModePFCOnly, true, false}, {ModeLossy, false, true}, {ModeSemiLossless, true, true}} {
		m, err := WithMode(f, tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		c := m.Policy.ClassByName("roce")
		if c.Lossless != tc.lossless || (c.ECN != nil) != tc.ecn {
			t.Errorf("%s: roce lossless %v ECN %v", tc.mode, c.Lossless, c.ECN != nil)
		}
		if string(m.Policy.Mode) != tc.mode {
			t.Errorf("%s: the policy's mode is %q", tc.mode, m.Policy.Mode)
		}
	}
	if c := f.Policy.ClassByName("roce"); !c.Lossless || c.ECN == nil {
		t.Errorf("WithMode changed the intent: %+v", c)
	}
	if _, err := WithMode(f, "lossless-ish"); err == nil {
		t.Error("an unknown mode accepted")
	}
}

// TestCounterEstimateOfResends: validate takes the packets sent again from
// counters alone, switch drops plus the receivers' out_of_sequence and
// duplicate_request (validate/lossy.go). Under go-back-N, where every one
// of those is resent, that is exactly what the senders resent; with
// selective repeat the receiver keeps out-of-sequence packets and the
// estimate is an upper bound. Same 16:1 incast as TestLosslessVsLossyIncast.
func TestCounterEstimateOfResends(t *testing.T) {
	for _, rec := range Recoveries() {
		sc, err := ParseSpec("incast:16:1")
		if err != nil {
			t.Fatal(err)
		}
		sc.Size = 1_000_000
		r := runSc(t, parse(t, lossyIntent), sc, StarOptions{Speed: 100e9}, Options{Duration: 10 * time.Millisecond, AckTimeout: AckTimeout(8), Recovery: rec})
		var est int64
		for _, c := range r.HostRDMACounters() {
			est += c["out_of_sequence"] + c["duplicate_request"]
		}
		est += r.Totals(false).Drops
		got := r.Recovery.RetransmittedPackets
		if got == 0 || r.FCT.Finished != 16 {
			t.Fatalf("%s: %d resent, %d of 16 finished", rec, got, r.FCT.Finished)
		}
		if rec == RecoveryGoBackN && est != got || est < got {
			t.Errorf("%s: counters estimate %d packets sent again, the senders resent %d", rec, est, got)
		}
	}
}

// RecoveryFor: the intent's ROCE_ACCL selective_repeat_forced_en chooses
// selective repeat; absent or false leaves ConnectX's go-back-N.
func TestRecoveryFor(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		acc  *intent.NICAccelerations
		want Recovery
	}{
		{nil, RecoveryGoBackN},
		{&intent.NICAccelerations{}, RecoveryGoBackN},
		{&intent.NICAccelerations{SelectiveRepeat: &no}, RecoveryGoBackN},
		{&intent.NICAccelerations{SelectiveRepeat: &yes}, RecoverySelectiveRepeat},
	} {
		if got := RecoveryFor(&intent.Policy{NICAccelerations: tc.acc}); got != tc.want {
			t.Errorf("RecoveryFor(%+v) = %s, want %s", tc.acc, got, tc.want)
		}
	}
}

// Semi-lossless (Onyx's "pause RX compliant, no pause propagation";
// intent.ModeSemiLossless): a receiver that drains at half rate pauses
// its switch port, which obeys (the egress waits), but the switch never
// sends pause upstream: its ingress fills and drops, by design, and
// RoCE RC recovers the drops. The same run in lossless mode pauses the
// senders and drops nothing.
func TestSemiLosslessHonoursButNeverSendsPause(t *testing.T) {
	opt := Options{Duration: 5 * time.Millisecond, AckTimeout: AckTimeout(8)}
	sc := func() *Scenario {
		sc, err := ParseSpec("slow-receiver:50")
		if err != nil {
			t.Fatal(err)
		}
		sc.Size = 1_000_000
		return sc
	}
	switchTotals := func(r *Result) (sent, recv, drops int64, paused Time) {
		for _, p := range r.Ports {
			if !p.Host {
				sent += p.PauseSent
				recv += p.PauseRecv
				drops += p.Drops
				paused += p.PausedTime
			}
		}
		return
	}
	ll := runSc(t, parse(t, minimalIntent), sc(), StarOptions{Speed: 100e9}, opt)
	if sent, _, drops, _ := switchTotals(ll); sent == 0 || drops != 0 {
		t.Fatalf("lossless: switch sent %d pause frames and dropped %d; want pause and no drop", sent, drops)
	}
	semi := parse(t, minimalIntent+"  mode: semi-lossless\n")
	r := runSc(t, semi, sc(), StarOptions{Speed: 100e9}, opt)
	sent, recv, drops, paused := switchTotals(r)
	if sent != 0 {
		t.Errorf("semi-lossless: switch ports sent %d pause frames, want none", sent)
	}
	if recv == 0 || paused == 0 {
		t.Errorf("semi-lossless: switch received %d pause frames and was paused %v; want the receiver's pause obeyed", recv, paused)
	}
	if drops == 0 {
		t.Fatalf("semi-lossless: the switch dropped nothing; its ingress should overflow without pause")
	}
	if r.Totals(true).Drops != 0 {
		t.Errorf("semi-lossless: %d drops counted as lossless (switch drops are by design here)", r.Totals(true).Drops)
	}
	if r.Recovery.Flows == 0 || r.Recovery.RetransmittedBytes == 0 {
		t.Errorf("semi-lossless: recovery %+v, want RoCE RC resending the switch's drops", r.Recovery)
	}
	t.Logf("semi-lossless: switch pause sent %d, received %d, paused %v, drops %d; %s; recovery %+v", sent, recv, paused, drops, r.Verdict(), r.Recovery)
	if strings.HasPrefix(r.Verdict(), "LOSSLESS BROKEN") {
		t.Errorf("semi-lossless verdict %q", r.Verdict())
	}
}
