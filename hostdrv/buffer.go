package hostdrv

import (
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/fabricctl/fabricctl/hostdrv/internal/dcbnl"
	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/portfacts"
	"github.com/fabricctl/fabricctl/plan"
)

// The mlx5 figures are portfacts' (the one home of a NIC's derived
// facts): the driver's constants and its calculate_xoff / minimum.
const (
	mlx5DefaultCableM = portfacts.MLX5DefaultCableM
	mlx5MinMaxMTU     = portfacts.MLX5MinMaxMTU
	mlx5MinSpeedMbps  = portfacts.MLX5MinSpeedMbps
	mlx5CellFallback  = portfacts.MLX5CellFallback
)

// MLX5Headroom is the input of mlx5's lossless buffer minimum
// (portfacts.MLX5: Xoff is calculate_xoff, Min the driver's minimum).
type MLX5Headroom = portfacts.MLX5

// linkSpeed reads /sys/class/net/<if>/speed (Mb/s); 0 when unknown (link
// down reads -1 or fails with EINVAL).
func linkSpeed(fsys fs.FS, ifname string) int {
	b, err := fs.ReadFile(fsys, path.Join("sys/class/net", ifname, "speed"))
	if err != nil {
		return 0
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || v <= 0 {
		return 0
	}
	return v
}

// bufferEnv is what the buffer checks need besides the layouts.
type bufferEnv struct {
	nic      intent.NIC
	want     NICState
	obs      *nicObs
	pauseOff bool // 802.3x pause is (or will be, before the buffer step) off
	pfcOn    bool
}

// headroom returns the mlx5 headroom inputs that will hold when the buffer
// step runs (after the MTU and PFC steps), and words saying where each came
// from.
func (e bufferEnv) headroom() (MLX5Headroom, string) {
	h := MLX5Headroom{SpeedMbps: e.obs.SpeedMbps, MTU: e.obs.MTU, MaxMTU: e.obs.MaxMTU, Cell: mlx5CellFallback, CableM: mlx5DefaultCableM}
	speedSrc := "link speed"
	if h.SpeedMbps <= 0 {
		h.SpeedMbps, speedSrc = int(e.nic.Speed/1_000_000), "the intent's NIC speed"
		if h.SpeedMbps <= 0 {
			h.SpeedMbps, speedSrc = mlx5MinSpeedMbps, "unknown: mlx5 assumes 40G"
		}
	}
	cableSrc := "mlx5 default"
	switch {
	case e.want.PFC != nil && e.want.PFC.ManageDelay:
		h.CableM, cableSrc = int(e.want.PFC.Delay), "intent"
	case e.obs.PFC != nil && e.obs.PFC.Delay > 0:
		h.CableM, cableSrc = int(e.obs.PFC.Delay), "as read"
	}
	if e.want.MTU > 0 {
		h.MTU = e.want.MTU
	}
	return h, fmt.Sprintf("%d Mb/s (%s), cable %d m (%s), MTU %d, max_mtu %d (floor %d), cell %d B", h.SpeedMbps, speedSrc, h.CableM, cableSrc, h.MTU, h.MaxMTU, mlx5MinMaxMTU, h.Cell)
}

// diffBuffer plans the receive buffer layout. The buffer is the host's own
// (DCBX does not carry it), so it is written even when the DCB objects are
// verify-only. A driver that reports no BUFFER object (no dcbnl getbuffer,
// or mlx5 without MLX5_BUFFER_SUPPORTED: the kernel then leaves the
// attribute out of IEEE_GET) gets a note, not a step that would fail on
// every apply.
//
// Before a write is planned, the layout is checked as the driver will
// check it: the sizes must fit total_size (mlx5e_port_manual_buffer_config:
// EINVAL when the new headroom exceeds the spare buffer), and on mlx5 every
// buffer that will be lossless must hold the minimum of MLX5Headroom.Min.
// Both figures are in the change's reason; a violation is a plan error, so
// nothing is written.
func (d *Driver) diffBuffer(p *Plan, q Quirks, ifn string, want Buffer, env bufferEnv) []error {
	obs := env.obs
	if obs.Buffer == nil {
		p.Target.Notes = append(p.Target.Notes, fmt.Sprintf("%s: the driver reports no receive buffer layout (no dcbnl buffer support): policy.hostBuffers not applied (%s)", ifn, want.String()))
		return nil
	}
	have := want.observed(*obs.Buffer)
	bs, as := have.format(want), want.String()
	// iproute2's `dcb buffer show` prints total-size as the driver reports
	// it; so does the plan.
	bs += fmt.Sprintf(" total-size %d", obs.Buffer.Total)
	a := plan.Update
	if want.matches(have, q.BufferCell) {
		a, as = plan.NoOp, bs
	}
	reason := "policy.hostBuffers"
	if p.backup != nil {
		reason = "restore"
	}
	if q.BufferCell > 0 {
		reason += fmt.Sprintf("; sizes match to within %d B: the driver rounds them down to whole buffer cells", q.BufferCell)
	}

	// The sizes the port will have: the managed ones from want, the others
	// as read.
	sizes := obs.Buffer.Size
	for i, sz := range want.Size {
		if want.managed(i) {
			sizes[i] = sz
		}
	}
	var errs []error
	var sum uint64
	for _, sz := range sizes {
		sum += uint64(sz)
	}
	if obs.Buffer.Total == 0 {
		reason += fmt.Sprintf("; sizes sum to %d B; total_size reads 0 (not reported): the sum is not checked", sum)
	} else {
		reason += fmt.Sprintf("; sizes sum to %d B of total_size %d B as read", sum, obs.Buffer.Total)
		if sum > uint64(obs.Buffer.Total) {
			errs = append(errs, settingErr(ifn, "buffer", fmt.Errorf("the buffer sizes sum to %d B, more than the port's total_size %d B (as the driver reports it): make policy.hostBuffers smaller", sum, obs.Buffer.Total)))
		}
	}
	if q.LosslessXoffMLX5 && p.backup == nil {
		m := env.losslessMinimum(want.PrioBuffer)
		var lossless []string
		for _, i := range m.Lossless {
			lossless = append(lossless, fmt.Sprint(i))
			if uint64(sizes[i]) < m.Min {
				errs = append(errs, settingErr(ifn, "buffer", fmt.Errorf("lossless buffer %d of %d B is below mlx5's minimum %d B (xoff %d + max_mtu + cell; port_buffer.c calculate_xoff at %s): the driver would refuse it with ENOMEM", i, sizes[i], m.Min, m.Headroom.Xoff(), m.Inputs)))
			}
		}
		if len(lossless) > 0 {
			reason += fmt.Sprintf("; lossless buffer %s needs >= %d B (mlx5 calculate_xoff: %s)", strings.Join(lossless, ","), m.Min, m.Inputs)
		}
	}
	p.add(plan.Change{Action: a, Path: ifn + "/buffer", Before: bs, After: as, Reason: reason}, false)
	if a == plan.NoOp || len(errs) > 0 {
		return errs
	}
	// GET, merge, SET the whole object, as `dcb buffer set` does
	// (iproute2 dcb/dcb_buffer.c dcb_cmd_buffer_set: dcb_buffer_get, the
	// arguments merged in, dcb_buffer_set of the same struct), so
	// total_size goes back as read; drivers ignore it on SET
	// (mlx5e_dcbnl_setbuffer reads only prio2buffer and buffer_size).
	set := *obs.Buffer
	sized := false
	for i, sz := range want.Size {
		if want.managed(i) && sz != set.Size[i] {
			set.Size[i], sized = sz, true
		}
	}
	if q.BufferSizesFirst && sized && set.PrioBuffer != want.PrioBuffer {
		sizes := want
		sizes.PrioBuffer = set.PrioBuffer
		if p.backup != nil {
			// Restore shrinks: move the priorities back first (PFC is off
			// by then, so no buffer is lossless), then the sizes.
			prio := set
			prio.PrioBuffer = want.PrioBuffer
			prio.Size = obs.Buffer.Size
			d.dcbStep(p, ifn+"/buffer", kindBuffer, "buffer", fmt.Sprintf("dcb buffer set dev %s %s", ifn, want.prioString()), dcbnl.SetBuffer(ifn, prio))
			set.PrioBuffer = want.PrioBuffer
			d.dcbStep(p, ifn+"/buffer", kindBuffer, "buffer", fmt.Sprintf("dcb buffer set dev %s %s", ifn, sizes.sizesString()), dcbnl.SetBuffer(ifn, set))
			return nil
		}
		d.dcbStep(p, ifn+"/buffer", kindBuffer, "buffer", fmt.Sprintf("dcb buffer set dev %s %s", ifn, sizes.sizesString()), dcbnl.SetBuffer(ifn, set))
		set.PrioBuffer = want.PrioBuffer
		d.dcbStep(p, ifn+"/buffer", kindBuffer, "buffer", fmt.Sprintf("dcb buffer set dev %s %s", ifn, want.prioString()), dcbnl.SetBuffer(ifn, set))
		return nil
	}
	set.PrioBuffer = want.PrioBuffer
	d.dcbStep(p, ifn+"/buffer", kindBuffer, "buffer", fmt.Sprintf("dcb buffer set dev %s %s", ifn, want.String()), dcbnl.SetBuffer(ifn, set))
	return nil
}

// LosslessMinimum is what a NIC's lossless receive buffers must each hold
// on mlx5: MLX5Headroom.Min of the inputs that hold when the buffer step
// runs.
type LosslessMinimum struct {
	Min      uint64       // bytes
	Headroom MLX5Headroom // its inputs
	Inputs   string       // where each input came from, in words
	Lossless []int        // the buffer indexes that will be lossless
}

// losslessMinimum is the minimum every lossless buffer of the layout
// prio2buf must hold, and which buffers are lossless: the driver counts a
// buffer lossless when a priority mapped to it has PFC on, or every one
// while 802.3x pause is on (fill_pfc_en).
func (e bufferEnv) losslessMinimum(prio2buf [8]uint8) LosslessMinimum {
	h, src := e.headroom()
	m := LosslessMinimum{Min: h.Min(), Headroom: h, Inputs: src}
	pfc := uint8(0)
	if e.want.PFC != nil {
		pfc = e.want.PFC.Enable
	}
	if !e.pauseOff {
		pfc = 0xff // fill_pfc_en: global pause on -> every priority
	}
	for i := range 8 {
		if bufferLossless(prio2buf, pfc, i) {
			m.Lossless = append(m.Lossless, i)
		}
	}
	return m
}

// FreshLosslessMinimum is what `host plan --assume fresh` holds the lossless
// receive buffers of policy.hostBuffers to on NIC nic of host h: a fresh
// mlx5_core NIC (FreshBackup) after the MTU, pause and PFC steps the intent
// plans, the speed and cable from the NIC or its link as Plan takes them.
// check calls it (FC129) so that check and host plan refuse the same
// buffers with the same number. ok is false when the intent lays out no
// host buffers.
func FreshLosslessMinimum(f *intent.Fabric, h *intent.Host, nic intent.NIC) (LosslessMinimum, bool) {
	if f == nil || f.Policy.HostBuffer == nil {
		return LosslessMinimum{}, false
	}
	i := 0
	for j := range h.NICs {
		if h.NICs[j].Interface == nic.Interface {
			i = j
			break
		}
	}
	obs := freshObs(i, nic, "mlx5_core")
	b := &Backup{NICs: []nicObs{obs}}
	linked := withLink(f, h, nic)
	want, _ := MLX5{}.Desired(assumedFiles(b), &f.Policy, linked)
	if want.Buffer == nil {
		return LosslessMinimum{}, false
	}
	// As diff decides it: 802.3x pause as the intent sets it, else as read.
	pauseOff := !obs.Pause.RX && !obs.Pause.TX
	if want.Pause != nil {
		pauseOff = !want.Pause.RX && !want.Pause.TX
	}
	env := bufferEnv{nic: linked, want: want, obs: &obs, pauseOff: pauseOff, pfcOn: want.PFC != nil && want.PFC.Enable != 0}
	return env.losslessMinimum(want.Buffer.PrioBuffer), true
}

// bufferLossless reports whether buffer i is lossless for pfcEn and
// prio2buffer, as mlx5's update_buffer_lossy decides: lossless when at
// least one priority mapped to it has PFC on.
func bufferLossless(prio2buf [8]uint8, pfcEn uint8, i int) bool {
	for pr, bu := range prio2buf {
		if int(bu) == i && pfcEn&(1<<pr) != 0 {
			return true
		}
	}
	return false
}
