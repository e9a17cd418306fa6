package hostdrv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"
	"strings"
	"syscall"
	"unicode"

	"github.com/fabricctl/fabricctl/hostdrv/internal/dcbnl"
	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/plan"
)

// Driver plans and applies the QoS of one host's NICs.
type Driver struct {
	Kernel   Kernel
	Files    Files
	Backends *Backends // nil = NewBackends()
	Log      *slog.Logger
}

// Step is one write that carries out part of a plan.
type Step struct {
	// Path is the plan path it implements ("ens1f0np0/pfc").
	Path string
	// Command is the equivalent command line (dcb, ethtool, ip, echo, mkdir).
	Command string
	// Netlink is the raw request for netlink steps (nil for ioctl and files).
	Netlink []byte
	run     func() error
}

// Plan is a host's plan and the steps that carry it out.
type Plan struct {
	Target plan.TargetPlan
	Steps  []Step

	fabric *intent.Fabric
	host   *intent.Host
	// verify holds paths that differ but are owned by someone else.
	verify map[string]bool
}

// nicObs is what was read from one NIC.
type nicObs struct {
	Interface string            `json:"interface"`
	Driver    string            `json:"driver,omitempty"`
	MTU       int               `json:"mtu"`
	DCBX      *uint8            `json:"dcbx,omitempty"`
	Apps      []dcbnl.App       `json:"apps,omitempty"`
	PFC       *dcbnl.PFC        `json:"pfc,omitempty"`
	ETS       *dcbnl.ETS        `json:"ets,omitempty"`
	Buffer    *dcbnl.Buffer     `json:"buffer,omitempty"`
	Pause     *Pause            `json:"pause,omitempty"`
	Files     map[string]string `json:"files,omitempty"`

	index int
	dcb   bool // the IEEE state was read
}

func (d *Driver) log() *slog.Logger {
	if d.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.Log
}

func (d *Driver) backends() *Backends {
	if d.Backends == nil {
		return NewBackends()
	}
	return d.Backends
}

// Plan observes every RoCE NIC of host h and returns what apply would change.
// Settings that cannot be read are errors in the plan (and the returned
// error); the other settings of the host are still planned.
func (d *Driver) Plan(ctx context.Context, f *intent.Fabric, h *intent.Host) (*Plan, error) {
	p := &Plan{
		Target: plan.TargetPlan{Name: h.Name, Kind: plan.KindHost, Changes: []plan.Change{}},
		fabric: f, host: h, verify: map[string]bool{},
	}
	var errs []error
	var basis []nicObs
	nics := append([]intent.NIC(nil), h.NICs...)
	sort.Slice(nics, func(i, j int) bool { return nics[i].Interface < nics[j].Interface })
	platforms := map[string]bool{}
	for _, nic := range nics {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("host %s: %w", h.Name, err)
		}
		if err := checkNICNames(nic); err != nil {
			errs = append(errs, settingErr(nic.Interface, "name", err))
			basis = append(basis, nicObs{Interface: nic.Interface})
			continue
		}
		be := d.backends().For(driverName(d.Files, nic.Interface))
		platforms[be.Name()] = true
		obs, nerrs := d.observe(nic)
		errs = append(errs, nerrs...)
		if obs.index != 0 { // a missing interface has nothing else to plan
			want, notes := be.Desired(d.Files, &f.Policy, nic)
			p.Target.Notes = append(p.Target.Notes, notes...)
			errs = append(errs, d.diff(p, be, nic, want, &obs)...)
		}
		basis = append(basis, obs.basis())
	}
	names := make([]string, 0, len(platforms))
	for n := range platforms {
		names = append(names, n)
	}
	sort.Strings(names)
	p.Target.Platform = strings.Join(names, ",")
	b, _ := json.Marshal(basis)
	p.Target.Basis = plan.Hash(b)
	p.Target.Sort()
	if err := errors.Join(errs...); err != nil {
		p.Target.Error = err.Error()
		return p, fmt.Errorf("host %s: %w", h.Name, err)
	}
	return p, nil
}

// checkNICNames rejects interface and RDMA device names that are not plain
// names: both become sysfs, configfs and debugfs paths, so a slash or a
// dot-dot would reach outside /sys. Netdev names follow the kernel's
// dev_valid_name (at most 15 bytes, no '/', ':' or white space, not "." or
// ".."); RDMA device names the same rules within IB_DEVICE_NAME_MAX.
func checkNICNames(nic intent.NIC) error {
	if err := plainName(nic.Interface, 15); err != nil {
		return fmt.Errorf("interface name %q: %w", nic.Interface, err)
	}
	if nic.RDMADevice != "" {
		if err := plainName(nic.RDMADevice, 63); err != nil {
			return fmt.Errorf("RDMA device name %q (nics[].rdma): %w", nic.RDMADevice, err)
		}
	}
	return nil
}

func plainName(s string, maxLen int) error {
	switch {
	case s == "":
		return errors.New("empty")
	case s == "." || s == "..":
		return errors.New("not a device name")
	case len(s) > maxLen:
		return fmt.Errorf("longer than %d bytes", maxLen)
	case strings.ContainsFunc(s, func(r rune) bool { return r == '/' || r == ':' || r == 0 || unicode.IsSpace(r) }):
		return errors.New("contains '/', ':', NUL or white space")
	}
	return nil
}

// observe reads one NIC. A missing interface stops there (index 0).
func (d *Driver) observe(nic intent.NIC) (nicObs, []error) {
	o := nicObs{Interface: nic.Interface, Driver: driverName(d.Files, nic.Interface), Files: map[string]string{}}
	idx, mtu, err := d.Kernel.Link(nic.Interface)
	if err != nil {
		return o, []error{settingErr(nic.Interface, "link", err)}
	}
	o.index, o.MTU = idx, mtu
	var errs []error
	replies, err := d.Kernel.DCB(dcbnl.GetIEEE(nic.Interface))
	if err == nil && len(replies) == 0 {
		err = fmt.Errorf("%w: no reply to IEEE_GET", dcbnl.ErrMalformed)
	}
	if err == nil {
		var st dcbnl.IEEE
		st, err = dcbnl.DecodeIEEE(replies[0])
		if err == nil {
			o.dcb = true
			if st.HasDCBX {
				m := st.DCBX
				o.DCBX = &m
			}
			o.Apps, o.PFC, o.ETS, o.Buffer = st.Apps, st.PFC, st.ETS, st.Buffer
		}
	}
	if err != nil {
		errs = append(errs, settingErr(nic.Interface, "DCB (DCBX, APP, PFC, ETS)", err))
	}
	if pa, err := d.Kernel.Pause(nic.Interface); err == nil {
		o.Pause = &pa
	} else if !errors.Is(err, syscall.EOPNOTSUPP) {
		errs = append(errs, settingErr(nic.Interface, "pause", err))
	}
	return o, errs
}

// basis is o as it enters the plan's Basis hash: the configuration only.
// The PFC requests/indications counters (pause frames sent and received)
// move with traffic on a live lossless link; hashing them would make every
// plan of a busy host stale before apply could use it.
func (o nicObs) basis() nicObs {
	if o.PFC != nil {
		pfc := *o.PFC
		pfc.Requests, pfc.Indications = [dcbnl.MaxTCs]uint64{}, [dcbnl.MaxTCs]uint64{}
		o.PFC = &pfc
	}
	return o
}

func (p *Plan) add(c plan.Change, verifyOnly bool) {
	if verifyOnly && c.Action != plan.NoOp {
		c.Reason = strings.TrimSpace(c.Reason + " — verify only: DCBX is switch-willing, the switch's advertisement sets this; fix it on the switch")
		p.verify[c.Path] = true
	}
	p.Target.Changes = append(p.Target.Changes, c)
}

func change(before, after string, exists bool) plan.Action {
	switch {
	case !exists:
		return plan.Create
	case before == after:
		return plan.NoOp
	}
	return plan.Update
}

// diff compares want with obs, adding changes and steps to p.
func (d *Driver) diff(p *Plan, be Backend, nic intent.NIC, want NICState, obs *nicObs) []error {
	ifn := nic.Interface
	q := be.Quirks()
	var errs []error
	pth := func(s string) string { return ifn + "/" + s }

	// MTU.
	if want.MTU > 0 {
		bs, as := fmt.Sprint(obs.MTU), fmt.Sprint(want.MTU)
		a := change(bs, as, true)
		p.add(plan.Change{Action: a, Path: pth("mtu"), Before: bs, After: as, Reason: "policy.hostMTU"}, false)
		if a != plan.NoOp {
			mtu := want.MTU
			p.Steps = append(p.Steps, Step{Path: pth("mtu"), Command: fmt.Sprintf("ip link set dev %s mtu %d", ifn, mtu),
				Netlink: setLinkMTURequest(uint32(len(p.Steps)+1), obs.index, mtu),
				run:     func() error { return settingErr(ifn, "MTU", d.Kernel.SetMTU(ifn, mtu)) }})
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
			p.add(plan.Change{Action: a, Path: pth("dcbx"), Before: bs, After: as, Reason: "policy.dcbx " + string(p.fabric.Policy.DCBX)}, vo)
			if a != plan.NoOp && !vo {
				d.dcbStep(p, pth("dcbx"), "DCBX", fmt.Sprintf("dcb dcbx set dev %s %s", ifn, dcbxString(*want.DCBX)), dcbnl.SetDCBX(ifn, *want.DCBX))
			}
		}
		// APP (DSCP trust).
		if want.Apps != nil {
			d.diffApps(p, q, ifn, want, obs, vo)
		}
		// PFC: written only when it differs (mlx5 flaps the link).
		if want.PFC != nil {
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
			if wantPFC.ManageDelay {
				reason += fmt.Sprintf("; delay = cable length %d m (mlx5)", wantPFC.Delay)
			}
			if a != plan.NoOp && q.PFCChangeFlapsLink && (obs.PFC == nil || obs.PFC.Enable != wantPFC.Enable) {
				reason += "; the link flaps briefly when PFC changes"
			}
			p.add(plan.Change{Action: a, Path: pth("pfc"), Before: bs, After: as, Reason: reason}, vo)
			if a != plan.NoOp && !vo {
				var set dcbnl.PFC
				if obs.PFC != nil {
					set = *obs.PFC // GET, merge, SET the whole object, as dcb(8) does
				}
				set.Enable = wantPFC.Enable
				if wantPFC.ManageDelay {
					set.Delay = wantPFC.Delay
				}
				d.dcbStep(p, pth("pfc"), "PFC", fmt.Sprintf("dcb pfc set dev %s %s", ifn, wantPFC.String()), dcbnl.SetPFC(ifn, set))
			}
		}
		// ETS.
		if want.ETS != nil {
			bs := ""
			var have ETS
			if obs.ETS != nil {
				have = ETS{Willing: obs.ETS.Willing != 0, PrioTC: obs.ETS.PrioTC, TSA: obs.ETS.TSA, BW: obs.ETS.TCTxBW}.etsBWOnly()
				if q.ETSWillingUnreported {
					have.Willing = want.ETS.Willing // not reported: not compared
				}
				bs = have.String()
			}
			as := want.ETS.etsBWOnly().String()
			a := change(bs, as, obs.ETS != nil)
			p.add(plan.Change{Action: a, Path: pth("ets"), Before: bs, After: as, Reason: "class priorities, strict CNP class, ETS weights"}, vo)
			if a != plan.NoOp && !vo {
				var set dcbnl.ETS
				if obs.ETS != nil {
					set = *obs.ETS
				}
				set.Willing = 0
				if want.ETS.Willing {
					set.Willing = 1
				}
				set.PrioTC, set.TSA, set.TCTxBW = want.ETS.PrioTC, want.ETS.TSA, want.ETS.BW
				d.dcbStep(p, pth("ets"), "ETS", fmt.Sprintf("dcb ets set dev %s %s", ifn, want.ETS.String()), dcbnl.SetETS(ifn, set))
			}
		}
		// Receive buffers, after PFC: the driver derives each buffer's
		// lossless bit from pfc_en and prio2buffer.
		if want.Buffer != nil {
			d.diffBuffer(p, q, ifn, *want.Buffer, obs)
		}
	}

	// Global pause.
	if want.Pause != nil {
		if obs.Pause == nil {
			p.Target.Notes = append(p.Target.Notes, fmt.Sprintf("%s: the driver does not report 802.3x pause (EOPNOTSUPP): global pause not checked", ifn))
		} else {
			bs, as := obs.Pause.String(), want.Pause.String()
			a := change(bs, as, true)
			p.add(plan.Change{Action: a, Path: pth("pause"), Before: bs, After: as, Reason: "802.3x pause must be off where PFC is on"}, false)
			if a != plan.NoOp {
				set := Pause{Autoneg: obs.Pause.Autoneg, RX: want.Pause.RX, TX: want.Pause.TX}
				p.Steps = append(p.Steps, Step{Path: pth("pause"),
					Command: fmt.Sprintf("ethtool -A %s %s", ifn, set.String()),
					run:     func() error { return settingErr(ifn, "pause", d.Kernel.SetPause(ifn, set)) }})
			}
		}
	}

	// Control files (configfs, sysfs, debugfs).
	made := map[string]bool{}
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
			p.Steps = append(p.Steps, Step{Path: pth(fl.Setting), Command: "mkdir -p /" + dir,
				run: func() error {
					if err := d.Files.Mkdir(dir); err != nil && !errors.Is(err, fs.ErrExist) {
						return settingErr(ifn, fl.Setting, fmt.Errorf("mkdir /%s: %w", dir, err))
					}
					return nil
				}})
		}
		p.Steps = append(p.Steps, Step{Path: pth(fl.Setting), Command: fmt.Sprintf("echo %s > /%s", shellQuote(fl.Value), fl.Path),
			run: func() error {
				if err := d.Files.WriteFile(fl.Path, []byte(fl.Value+"\n")); err != nil {
					return settingErr(ifn, fl.Setting, fmt.Errorf("write /%s: %w", fl.Path, err))
				}
				return nil
			}})
	}
	return errs
}

// diffBuffer plans the receive buffer layout. The buffer is the host's own
// (DCBX does not carry it), so it is written even when the DCB objects are
// verify-only. A driver that reports no BUFFER object (no dcbnl getbuffer,
// or mlx5 without MLX5_BUFFER_SUPPORTED: the kernel then leaves the
// attribute out of IEEE_GET) gets a note, not a step that would fail on
// every apply.
func (d *Driver) diffBuffer(p *Plan, q Quirks, ifn string, want Buffer, obs *nicObs) {
	if obs.Buffer == nil {
		p.Target.Notes = append(p.Target.Notes, fmt.Sprintf("%s: the driver reports no receive buffer layout (no dcbnl buffer support): policy.hostBuffers not applied (%s)", ifn, want.String()))
		return
	}
	have := want.observed(*obs.Buffer)
	bs, as := have.format(want), want.String()
	a := plan.Update
	if want.matches(have, q.BufferCell) {
		a, as = plan.NoOp, bs
	}
	reason := "policy.hostBuffers"
	if q.BufferCell > 0 {
		reason += fmt.Sprintf("; sizes match to within %d B: the driver rounds them down to whole buffer cells", q.BufferCell)
	}
	p.add(plan.Change{Action: a, Path: ifn + "/buffer", Before: bs, After: as, Reason: reason}, false)
	if a == plan.NoOp {
		return
	}
	// GET, merge, SET the whole object, as `dcb buffer set` does; total_size
	// is read-only and sent as 0.
	set := *obs.Buffer
	set.Total = 0
	sized := false
	for i, sz := range want.Size {
		if sz != 0 && sz != set.Size[i] {
			set.Size[i], sized = sz, true
		}
	}
	if q.BufferSizesFirst && sized && set.PrioBuffer != want.PrioBuffer {
		sizes := want
		sizes.PrioBuffer = set.PrioBuffer
		d.dcbStep(p, ifn+"/buffer", "buffer", fmt.Sprintf("dcb buffer set dev %s %s", ifn, sizes.sizesString()), dcbnl.SetBuffer(ifn, set))
		set.PrioBuffer = want.PrioBuffer
		d.dcbStep(p, ifn+"/buffer", "buffer", fmt.Sprintf("dcb buffer set dev %s %s", ifn, want.prioString()), dcbnl.SetBuffer(ifn, set))
		return
	}
	set.PrioBuffer = want.PrioBuffer
	d.dcbStep(p, ifn+"/buffer", "buffer", fmt.Sprintf("dcb buffer set dev %s %s", ifn, want.String()), dcbnl.SetBuffer(ifn, set))
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
			p.add(plan.Change{Action: plan.Create, Path: path, After: as, Reason: "trust DSCP: class mapping"}, vo)
			add = append(add, dcbnl.App{Selector: dcbnl.SelectorDSCP, Priority: uint8(pr), Protocol: uint16(dscp)})
		default:
			p.add(plan.Change{Action: plan.Update, Path: path, Before: prios(cur), After: as, Reason: "trust DSCP: class mapping"}, vo)
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
		p.add(plan.Change{Action: plan.Delete, Path: fmt.Sprintf("%s/app/dscp/%d", ifn, dscp), Before: prios(have[dscp]),
			Reason: "stale: this DSCP is not in the intent"}, vo)
		for _, old := range have[dscp] {
			del = append(del, dcbnl.App{Selector: dcbnl.SelectorDSCP, Priority: uint8(old), Protocol: uint16(dscp)})
		}
	}
	if vo {
		return
	}
	if len(add) > 0 {
		d.dcbStep(p, ifn+"/app", "APP", fmt.Sprintf("dcb app add dev %s dscp-prio %s", ifn, appArgs(add)), dcbnl.AddApps(ifn, add))
	}
	if len(del) > 0 {
		d.dcbStep(p, ifn+"/app", "APP", fmt.Sprintf("dcb app del dev %s dscp-prio %s", ifn, appArgs(del)), dcbnl.DelApps(ifn, del))
	}
}

// dcbStep adds a step that sends one dcbnl SET/DEL request and checks both
// the netlink error and the reply's status byte.
func (d *Driver) dcbStep(p *Plan, path, setting, command string, req dcbnl.Request) {
	raw, _ := req.Encode(uint32(len(p.Steps)+1), 0)
	ifn := req.Ifname()
	p.Steps = append(p.Steps, Step{Path: path, Command: command, Netlink: raw, run: func() error {
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

// Apply carries out p: it observes again and refuses a stale plan
// (plan.ErrStale), runs the steps in order (keeping going past a failed step
// so unrelated settings still converge), then reads back. The returned plan
// is the read-back: a converged host has no changes in it.
func (d *Driver) Apply(ctx context.Context, p *Plan) (*Plan, error) {
	now, err := d.Plan(ctx, p.fabric, p.host)
	if now == nil {
		return nil, err
	}
	if now.Target.Basis != p.Target.Basis {
		return now, fmt.Errorf("host %s: %w", p.host.Name, plan.ErrStale)
	}
	if len(p.Steps) == 0 {
		return now, err // nothing to write: the fresh observation is the read-back
	}
	log := d.log().With("target", p.host.Name)
	var errs []error
	var applied []string
	for i, s := range p.Steps {
		if err := ctx.Err(); err != nil {
			// Half-applied: say what was written, so nobody has to guess.
			done := "none"
			if len(applied) > 0 {
				done = strings.Join(applied, ", ")
			}
			return nil, fmt.Errorf("host %s: apply interrupted after %d of %d steps (applied: %s; apply again to finish): %w",
				p.host.Name, i, len(p.Steps), done, errors.Join(append(errs, err)...))
		}
		if err := s.run(); err != nil {
			log.Warn("host step failed", "path", s.Path, "err", err)
			errs = append(errs, err)
			continue
		}
		applied = append(applied, s.Path)
		log.Info("host step applied", "path", s.Path, "command", s.Command)
	}
	after, rerr := d.Plan(ctx, p.fabric, p.host)
	if after == nil {
		return nil, errors.Join(append(errs, rerr)...)
	}
	if len(errs) == 0 {
		for _, c := range after.Target.Changes {
			if c.Action != plan.NoOp && !after.verify[c.Path] {
				errs = append(errs, fmt.Errorf("read-back: %s is %q, want %q", c.Path, c.Before, c.After))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return after, fmt.Errorf("host %s: apply: %w", p.host.Name, err)
	}
	return after, rerr
}

func bits(m uint8) []int {
	var out []int
	for i := range 8 {
		if m&(1<<i) != 0 {
			out = append(out, i)
		}
	}
	return out
}

func prios(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("prio %d", x)
	}
	return strings.Join(s, ", ")
}

func slicesContains(v []int, x int) bool {
	for _, y := range v {
		if y == x {
			return true
		}
	}
	return false
}

func appArgs(apps []dcbnl.App) string {
	s := make([]string, len(apps))
	for i, a := range apps {
		s[i] = fmt.Sprintf("%d:%d", a.Protocol, a.Priority)
	}
	return strings.Join(s, " ")
}

func isDir(fsys fs.FS, name string) bool {
	fi, err := fs.Stat(fsys, name)
	return err == nil && fi.IsDir()
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
