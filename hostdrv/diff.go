package hostdrv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/fabricctl/fabricctl/hostdrv/internal/dcbnl"
	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/plan"
)

// Step kinds, in the order apply runs them on one interface (stepOrder).
const (
	kindMTU      = "mtu"
	kindDCBX     = "dcbx"
	kindPause    = "pause"
	kindStorm    = "pfc-prevention-tout"
	kindPFC      = "pfc"
	kindBuffer   = "buffer"
	kindETS      = "ets"
	kindApp      = "app"
	kindFiles    = "files"
	kindDCBXLast = "dcbx-last" // restore: hand DCBX back to the firmware last
)

// stepOrder is the order of one interface's steps.
//
// Apply: 802.3x pause goes off before PFC and the buffers: while global
// pause is on, mlx5's fill_pfc_en (port_buffer.c) reports every priority
// as PFC-enabled, so a prio2buffer change makes every buffer that has a
// priority lossless and each must then hold xoff + max_mtu + cell
// (update_xoff_threshold, else ENOMEM): at 400G that fails on the first
// apply. DSCP trust (the APP table; mlx5 switches trust on the first entry)
// comes after PFC is on the lossless priorities, so RoCE traffic is never
// classified onto a priority that is not yet lossless.
//
// Restore walks back: trust and ETS first, then PFC off before the buffers
// shrink (a lossless mlx5 buffer cannot be sized 0:
// mlx5e_port_manual_buffer_config returns EINVAL), pause last, and DCBX
// back to the firmware at the very end (the firmware agent would otherwise
// own the objects restore writes). Pause storm prevention (pfc-prevention-
// tout) follows global pause: on before PFC makes a priority lossless, so
// a NIC that gets stuck sending pause is never without it.
var stepOrder = map[bool][]string{
	false: {kindMTU, kindDCBX, kindPause, kindStorm, kindPFC, kindBuffer, kindETS, kindApp, kindFiles, kindDCBXLast},
	true:  {kindMTU, kindDCBX, kindApp, kindETS, kindPFC, kindBuffer, kindPause, kindStorm, kindFiles, kindDCBXLast},
}

// orderSteps sorts the steps from index start on (one interface's) into
// stepOrder and renumbers the netlink sequence numbers to the final order.
func (p *Plan) orderSteps(start int) {
	rank := map[string]int{}
	for i, k := range stepOrder[p.backup != nil] {
		rank[k] = i
	}
	tail := p.Steps[start:]
	sort.SliceStable(tail, func(i, j int) bool { return rank[tail[i].kind] < rank[tail[j].kind] })
	for i := range p.Steps {
		if raw := p.Steps[i].Netlink; len(raw) >= 12 {
			binary.NativeEndian.PutUint32(raw[8:12], uint32(i+1)) // nlmsg_seq
		}
	}
}

// withLink fills in the NIC's speed and cable length from the inventory link
// that ends on it when the NIC does not give them: the link's switch port
// has both (intent.Port.Speed, CableMeters; the port's cable defaults to
// intent.DefaultCableMeters).
func withLink(f *intent.Fabric, h *intent.Host, nic intent.NIC) intent.NIC {
	if f == nil || h == nil || nic.CableMeters > 0 && nic.Speed > 0 {
		return nic
	}
	for _, l := range f.Links {
		var sw intent.Endpoint
		switch {
		case l.A.Node == h.Name && l.A.Port == nic.Interface:
			sw = l.B
		case l.B.Node == h.Name && l.B.Port == nic.Interface:
			sw = l.A
		default:
			continue
		}
		s := f.Switch(sw.Node)
		if s == nil {
			continue
		}
		for _, pt := range s.Ports {
			if pt.Name != sw.Port {
				continue
			}
			if nic.CableMeters <= 0 {
				nic.CableMeters = pt.CableMeters
			}
			if nic.Speed <= 0 {
				nic.Speed = pt.Speed
			}
		}
	}
	return nic
}

// diff compares want with obs, adding changes and steps to p.
func (d *Driver) diff(p *Plan, be Backend, nic intent.NIC, want NICState, obs *nicObs) []error {
	start := len(p.Steps)
	defer p.orderSteps(start)
	ifn := nic.Interface
	q := be.Quirks()
	var errs []error
	pth := func(s string) string { return ifn + "/" + s }
	restoring := p.backup != nil

	// MTU.
	if want.MTU > 0 {
		bs, as := fmt.Sprint(obs.MTU), fmt.Sprint(want.MTU)
		a := change(bs, as, true)
		p.add(plan.Change{Action: a, Path: pth("mtu"), Before: bs, After: as, Reason: reasonOr(restoring, "policy.hostMTU")}, false)
		if a != plan.NoOp {
			mtu := want.MTU
			p.Steps = append(p.Steps, Step{Path: pth("mtu"), kind: kindMTU, Command: fmt.Sprintf("ip link set dev %s mtu %d", ifn, mtu),
				Netlink: setLinkMTURequest(uint32(len(p.Steps)+1), obs.index, mtu),
				run:     func() error { return settingErr(ifn, "MTU", d.Kernel.SetMTU(ifn, mtu)) }})
		}
	}

	// Global pause (ethtool), ordered before PFC by stepOrder.
	pauseOff := false
	if want.Pause != nil {
		pauseOff = !want.Pause.RX && !want.Pause.TX
		if obs.Pause == nil {
			p.Target.Notes = append(p.Target.Notes, fmt.Sprintf("%s: the driver does not report 802.3x pause (EOPNOTSUPP): global pause not checked", ifn))
		} else {
			bs, as := obs.Pause.String(), want.Pause.String()
			a := change(bs, as, true)
			reason := "802.3x pause must be off where PFC is on; turned off before PFC and the buffers (mlx5 fill_pfc_en counts every priority as paused while it is on)"
			p.add(plan.Change{Action: a, Path: pth("pause"), Before: bs, After: as, Reason: reasonOr(restoring, reason)}, false)
			if a != plan.NoOp {
				set := Pause{Autoneg: obs.Pause.Autoneg, RX: want.Pause.RX, TX: want.Pause.TX}
				p.Steps = append(p.Steps, Step{Path: pth("pause"), kind: kindPause,
					Command: fmt.Sprintf("ethtool -A %s %s", ifn, set.String()),
					run:     func() error { return settingErr(ifn, "pause", d.Kernel.SetPause(ifn, set)) }})
			}
		}
	} else if obs.Pause != nil {
		pauseOff = !obs.Pause.RX && !obs.Pause.TX
	}

	// Pause storm prevention (ethtool tunable), ordered after pause.
	if want.StormPrevention != nil {
		if err := d.diffStorm(p, ifn, *want.StormPrevention, obs); err != nil {
			errs = append(errs, err)
		}
	}

	if obs.dcb {
		vo := want.VerifyOnly
		// DCBX first: the driver ignores OS-written DCB objects unless the
		// host owns DCBX.
		if want.DCBX != nil {
			as := dcbxWant(*want.DCBX)
			bs, ok := "", obs.DCBX != nil
			a := plan.Create
			if ok {
				bs = dcbxString(*obs.DCBX)
				a = plan.Update
				if dcbxMatches(*want.DCBX, *obs.DCBX) {
					a, as = plan.NoOp, bs
				}
			}
			reason := "restore"
			if !restoring {
				reason = "policy.dcbx " + string(p.fabric.Policy.DCBX)
			}
			p.add(plan.Change{Action: a, Path: pth("dcbx"), Before: bs, After: as, Reason: reason}, vo)
			if a != plan.NoOp && !vo {
				mode, kind := *want.DCBX, kindDCBX
				if mode&DCBXHost == 0 {
					kind = kindDCBXLast
					if q.DCBXFirmwareIsZero {
						mode = 0
					}
				}
				d.dcbStep(p, pth("dcbx"), kind, "DCBX", fmt.Sprintf("dcb dcbx set dev %s %s", ifn, dcbxArgs(mode)), dcbnl.SetDCBX(ifn, mode))
			}
		}
		// APP (DSCP trust); ordered after PFC by stepOrder.
		if want.Apps != nil {
			d.diffApps(p, q, ifn, want, obs, vo)
		}
		// PFC: written only when it differs (mlx5 flaps the link).
		wantPFC := obs.PFC != nil && obs.PFC.Enable != 0
		if want.PFC != nil {
			wantPFC = want.PFC.Enable != 0
			d.diffPFC(p, q, ifn, want, obs, vo)
		}
		// ETS.
		if want.ETS != nil {
			errs = append(errs, d.diffETS(p, q, ifn, *want.ETS, obs, vo, restoring)...)
		}
		// Receive buffers: the driver derives each buffer's lossless bit
		// from pfc_en (or every priority, with global pause on) and
		// prio2buffer.
		if want.Buffer != nil {
			env := bufferEnv{nic: nic, want: want, obs: obs, pauseOff: pauseOff, pfcOn: wantPFC}
			errs = append(errs, d.diffBuffer(p, q, ifn, *want.Buffer, env)...)
		}
	}

	// Control files (configfs, sysfs, debugfs).
	made := map[string]bool{}
	// commits are the files that make staged writes take effect (bnxt_re's
	// cc/apply), written once after the files of their directory.
	var commits []File
	for _, fl := range want.Files {
		cur, err := fs.ReadFile(d.Files, fl.Path)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, settingErr(ifn, fl.Setting, err))
			continue
		}
		if !exists && (fl.Mkdir == "" || isDir(d.Files, fl.Mkdir)) {
			errs = append(errs, settingErr(ifn, fl.Setting, fmt.Errorf("/%s does not exist (wrong RDMA device or port?): %w", fl.Path, fs.ErrNotExist)))
			continue
		}
		bs := strings.TrimSpace(string(cur))
		if exists {
			obs.Files[fl.Path] = bs
		}
		a := change(bs, fl.Value, exists)
		p.add(plan.Change{Action: a, Path: pth(fl.Setting), Before: bs, After: fl.Value, Reason: "/" + fl.Path}, false)
		if a == plan.NoOp {
			continue
		}
		if !exists && !made[fl.Mkdir] {
			made[fl.Mkdir] = true
			dir := fl.Mkdir
			p.Steps = append(p.Steps, Step{Path: pth(fl.Setting), kind: kindFiles, Command: "mkdir -p /" + dir,
				run: func() error {
					if err := d.Files.Mkdir(dir); err != nil && !errors.Is(err, fs.ErrExist) {
						return settingErr(ifn, fl.Setting, fmt.Errorf("mkdir /%s: %w", dir, err))
					}
					return nil
				}})
		}
		p.Steps = append(p.Steps, fileStep(d, ifn, pth, fl))
		if c, ok := commitFile(fl.Path); ok && !slices.Contains(commits, c) {
			commits = append(commits, c)
		}
	}
	for _, c := range commits {
		p.add(plan.Change{Action: plan.Update, Path: pth(c.Setting), Before: "staged", After: c.Value,
			Reason: "/" + c.Path + ": bnxt_re hands the values written above to the firmware only on this write (configfs.c apply_store)"}, false)
		p.Steps = append(p.Steps, fileStep(d, ifn, pth, c))
	}
	return errs
}

// fileStep writes fl's value to its control file.
func fileStep(d *Driver, ifn string, pth func(string) string, fl File) Step {
	return Step{Path: pth(fl.Setting), kind: kindFiles, Command: fmt.Sprintf("echo %s > /%s", shellQuote(fl.Value), fl.Path),
		run: func() error {
			if err := d.Files.WriteFile(fl.Path, []byte(fl.Value+"\n")); err != nil {
				return settingErr(ifn, fl.Setting, fmt.Errorf("write /%s: %w", fl.Path, err))
			}
			return nil
		}}
}

func reasonOr(restoring bool, reason string) string {
	if restoring {
		return "restore"
	}
	return reason
}

// dcbxArgs renders a DCBX mode as `dcb dcbx set` arguments; mode 0 (hand
// DCBX back to the firmware on mlx5) has no keyword and is shown as a
// comment.
func dcbxArgs(m uint8) string {
	if m == 0 {
		return "# mode 0: firmware (the request carries DCB_ATTR_DCBX = 0)"
	}
	return dcbxString(m)
}

// diffPFC plans the PFC object.
func (d *Driver) diffPFC(p *Plan, q Quirks, ifn string, want NICState, obs *nicObs, vo bool) {
	wantPFC := *want.PFC
	if wantPFC.ManageDelay && q.PFCDelayIsCable && obs.PFC != nil && obs.PFC.Delay == 0 {
		// mlx5 reports its cable length (7 m by default, never 0)
		// only when it manages the port buffer (MLX5_BUFFER_SUPPORTED);
		// otherwise delay reads 0 whatever was written.
		wantPFC.ManageDelay, wantPFC.Delay = false, 0
		p.Target.Notes = append(p.Target.Notes, fmt.Sprintf("%s: the driver reports no PFC cable length (delay 0: mlx5 does not manage this port's buffer): cable length %d m not set, headroom is the firmware's", ifn, want.PFC.Delay))
	}
	have := PFC{ManageDelay: wantPFC.ManageDelay}
	bs := ""
	if obs.PFC != nil {
		have.Enable, have.Delay = obs.PFC.Enable, obs.PFC.Delay
		bs = have.String()
	}
	as := wantPFC.String()
	a := plan.Create
	if obs.PFC != nil {
		a = plan.Update
		if wantPFC.equal(have) {
			a = plan.NoOp
		}
	}
	reason := "lossless priorities " + joinInts(bits(wantPFC.Enable))
	if p.backup != nil {
		reason = "restore"
	}
	if wantPFC.ManageDelay && p.backup == nil {
		reason += fmt.Sprintf("; delay = cable length %d m (mlx5)", wantPFC.Delay)
		if q.PFCDelayNeedsSoftwareBuffer {
			reason += ": " + cableEffect(want, obs)
		}
	}
	if a != plan.NoOp && q.PFCChangeFlapsLink && (obs.PFC == nil || obs.PFC.Enable != wantPFC.Enable) {
		reason += "; the link flaps briefly when PFC changes"
	}
	p.add(plan.Change{Action: a, Path: ifn + "/pfc", Before: bs, After: as, Reason: reason}, vo)
	if a != plan.NoOp && !vo {
		var set dcbnl.PFC
		if obs.PFC != nil {
			set = *obs.PFC // GET, merge, SET the whole object, as dcb(8) does
		}
		set.Enable = wantPFC.Enable
		if wantPFC.ManageDelay {
			set.Delay = wantPFC.Delay
		}
		d.dcbStep(p, ifn+"/pfc", kindPFC, "PFC", fmt.Sprintf("dcb pfc set dev %s %s", ifn, wantPFC.String()), dcbnl.SetPFC(ifn, set))
	}
}

// cableEffect says whether mlx5 turns the cable length into headroom
// (Quirks.PFCDelayNeedsSoftwareBuffer).
func cableEffect(want NICState, obs *nicObs) string {
	switch {
	case want.Buffer == nil:
		return "cosmetic here: the port buffer is the firmware's (no policy.hostBuffers), and mlx5 resizes headroom from the cable length only for a software-owned buffer (manual_buffer); the value is recorded and read back, the headroom does not change"
	case obs.Buffer == nil:
		return "cosmetic here: the driver does not manage this port's buffer"
	}
	return "sets the xoff headroom of the lossless buffers: the port buffer is software-owned once `dcb buffer set` has run since the driver loaded (mlx5 manual_buffer; policy.hostBuffers is written by this tool, the flag itself is not readable)"
}

// diffETS plans the ETS object and refuses a class on a traffic class the
// device does not have (ets_cap).
func (d *Driver) diffETS(p *Plan, q Quirks, ifn string, want ETS, obs *nicObs, vo, restoring bool) []error {
	var errs []error
	if obs.ETS != nil && obs.ETS.ETSCap > 0 && !restoring {
		cap := int(obs.ETS.ETSCap)
		for pr, tc := range want.PrioTC {
			if int(tc) >= cap {
				errs = append(errs, settingErr(ifn, "ETS", fmt.Errorf("priority %d is mapped to traffic class %d, but the device has %d traffic classes (ets_cap): no class may use a priority above %d on this NIC", pr, tc, cap, cap-1)))
			}
		}
		for tc := cap; tc < len(want.TSA); tc++ {
			if want.TSA[tc] != TSAStrict || want.BW[tc] != 0 {
				// bnxt_ets_validate: a non-zero TSA or bandwidth above max_tc is EINVAL.
				errs = append(errs, settingErr(ifn, "ETS", fmt.Errorf("traffic class %d is above the device's %d traffic classes (ets_cap) but has TSA %s / %d %%", tc, cap, tsaName(want.TSA[tc]), want.BW[tc])))
			}
		}
	}
	bs := ""
	var have ETS
	if obs.ETS != nil {
		have = ETS{Willing: obs.ETS.Willing != 0, PrioTC: obs.ETS.PrioTC, TSA: obs.ETS.TSA, BW: obs.ETS.TCTxBW}.etsBWOnly()
		if q.ETSWillingUnreported {
			have.Willing = want.Willing // not reported: not compared
		}
		bs = have.String()
	}
	as := want.etsBWOnly().String()
	a := change(bs, as, obs.ETS != nil)
	p.add(plan.Change{Action: a, Path: ifn + "/ets", Before: bs, After: as, Reason: reasonOr(restoring, "class priorities, strict CNP class, ETS weights; unused TCs strict")}, vo)
	if a != plan.NoOp && !vo && len(errs) == 0 {
		var set dcbnl.ETS
		if obs.ETS != nil {
			set = *obs.ETS
		}
		set.Willing = 0
		if want.Willing {
			set.Willing = 1
		}
		set.PrioTC, set.TSA, set.TCTxBW = want.PrioTC, want.TSA, want.etsBWOnly().BW
		d.dcbStep(p, ifn+"/ets", kindETS, "ETS", fmt.Sprintf("dcb ets set dev %s %s", ifn, want.String()), dcbnl.SetETS(ifn, set))
	}
	return errs
}

// diffApps plans the DSCP APP entries: add the missing or different ones
// first (the first DSCP entry switches mlx5 to DSCP trust), then delete
// stale ones, so the port never falls back to PCP trust in between.
func (d *Driver) diffApps(p *Plan, q Quirks, ifn string, want NICState, obs *nicObs, vo bool) {
	have := map[int][]int{}
	for _, a := range obs.Apps {
		if a.Selector == dcbnl.SelectorDSCP {
			have[int(a.Protocol)] = append(have[int(a.Protocol)], int(a.Priority))
		}
	}
	reason := "trust DSCP: class mapping"
	if q.FullDSCPMap {
		reason = "trust DSCP: all 64 DSCPs (mlx5 keeps its firmware map, DSCP>>3, for any DSCP without an entry)"
	}
	if p.backup != nil {
		reason = "restore"
	}
	var add, del []dcbnl.App
	for _, dscp := range sortedKeys(want.Apps) {
		pr := want.Apps[dscp]
		path := fmt.Sprintf("%s/app/dscp/%d", ifn, dscp)
		as := fmt.Sprintf("prio %d", pr)
		cur := have[dscp]
		switch {
		case len(cur) == 1 && cur[0] == pr:
			p.add(plan.Change{Action: plan.NoOp, Path: path, Before: as, After: as}, vo)
		case len(cur) == 0:
			p.add(plan.Change{Action: plan.Create, Path: path, After: as, Reason: reason}, vo)
			add = append(add, dcbnl.App{Selector: dcbnl.SelectorDSCP, Priority: uint8(pr), Protocol: uint16(dscp)})
		default:
			p.add(plan.Change{Action: plan.Update, Path: path, Before: prios(cur), After: as, Reason: reason}, vo)
			if !slicesContains(cur, pr) {
				add = append(add, dcbnl.App{Selector: dcbnl.SelectorDSCP, Priority: uint8(pr), Protocol: uint16(dscp)})
			}
			for _, old := range cur {
				if old != pr && (!q.AppAddReplaces || len(cur) > 1) {
					del = append(del, dcbnl.App{Selector: dcbnl.SelectorDSCP, Priority: uint8(old), Protocol: uint16(dscp)})
				}
			}
		}
	}
	stale := make([]int, 0)
	for dscp := range have {
		if _, ok := want.Apps[dscp]; !ok {
			stale = append(stale, dscp)
		}
	}
	sort.Ints(stale)
	for _, dscp := range stale {
		r := "stale: this DSCP is not in the intent"
		if p.backup != nil {
			r = "restore: not in the backup"
		}
		p.add(plan.Change{Action: plan.Delete, Path: fmt.Sprintf("%s/app/dscp/%d", ifn, dscp), Before: prios(have[dscp]), Reason: r}, vo)
		for _, old := range have[dscp] {
			del = append(del, dcbnl.App{Selector: dcbnl.SelectorDSCP, Priority: uint8(old), Protocol: uint16(dscp)})
		}
	}
	if vo {
		return
	}
	if len(add) > 0 {
		d.dcbStep(p, ifn+"/app", kindApp, "APP", fmt.Sprintf("dcb app add dev %s dscp-prio %s", ifn, appArgs(add)), dcbnl.AddApps(ifn, add))
	}
	if len(del) > 0 {
		d.dcbStep(p, ifn+"/app", kindApp, "APP", fmt.Sprintf("dcb app del dev %s dscp-prio %s", ifn, appArgs(del)), dcbnl.DelApps(ifn, del))
	}
}

// dcbStep adds a step that sends one dcbnl SET/DEL request and checks both
// the netlink error and the reply's status byte.
func (d *Driver) dcbStep(p *Plan, path, kind, setting, command string, req dcbnl.Request) {
	raw, _ := req.Encode(uint32(len(p.Steps)+1), 0)
	ifn := req.Ifname()
	p.Steps = append(p.Steps, Step{Path: path, kind: kind, Command: command, Netlink: raw, run: func() error {
		replies, err := d.Kernel.DCB(req)
		if err != nil {
			return settingErr(ifn, setting, err)
		}
		if len(replies) == 0 {
			return settingErr(ifn, setting, fmt.Errorf("%w: no reply to %s", dcbnl.ErrMalformed, dcbnl.CmdName(req.Cmd)))
		}
		return settingErr(ifn, setting, dcbnl.DecodeStatus(replies[0]))
	}})
}
