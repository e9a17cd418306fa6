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
	// Assumed names the assumed state a plan-only driver observes
	// (Assume); "" = the machine's NICs.
	Assumed string
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
	kind    string // orders the steps of one interface (see stepOrder)
}

// Plan is a host's plan and the steps that carry it out.
type Plan struct {
	Target plan.TargetPlan
	Steps  []Step

	fabric *intent.Fabric
	host   *intent.Host
	// verify holds paths that differ but are owned by someone else.
	verify map[string]bool
	// obs is what was read from each NIC: a backup's content.
	obs []nicObs
	// backup is set when p restores a backup (Driver.PlanRestore).
	backup *Backup
}

// nicObs is what was read from one NIC.
type nicObs struct {
	Interface string        `json:"interface"`
	Driver    string        `json:"driver,omitempty"`
	PCI       string        `json:"pci,omitempty"`
	Index     int           `json:"ifindex,omitempty"`
	MTU       int           `json:"mtu"`
	MaxMTU    int           `json:"maxMTU,omitempty"`
	SpeedMbps int           `json:"speedMbps,omitempty"`
	DCBX      *uint8        `json:"dcbx,omitempty"`
	Apps      []dcbnl.App   `json:"apps,omitempty"`
	PFC       *dcbnl.PFC    `json:"pfc,omitempty"`
	ETS       *dcbnl.ETS    `json:"ets,omitempty"`
	Buffer    *dcbnl.Buffer `json:"buffer,omitempty"`
	Pause     *Pause        `json:"pause,omitempty"`
	// StormTout is the ethtool tunable pfc-prevention-tout as read (ms,
	// 0 = off; mlx5 reads auto back as 100); nil: not read.
	StormTout *uint16 `json:"pfcPreventionTout,omitempty"`
	// NoStormTout: the driver answered EOPNOTSUPP (no pause storm
	// prevention on this NIC).
	NoStormTout bool              `json:"pfcPreventionToutUnsupported,omitempty"`
	Files       map[string]string `json:"files,omitempty"`
	// Dirs are the configfs directories that existed (rdma_cm, bnxt_re and
	// their device directories), so a plan against a backup (--assume)
	// knows them.
	Dirs []string `json:"dirs,omitempty"`

	index int
	dcb   bool // the IEEE state was read
	// stormErr is why pfc-prevention-tout could not be read (not
	// EOPNOTSUPP): a plan error where the intent sets it.
	stormErr error
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
		nic = withLink(f, h, nic)
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
		p.obs = append(p.obs, obs)
	}
	names := make([]string, 0, len(platforms))
	for n := range platforms {
		names = append(names, n)
	}
	sort.Strings(names)
	p.Target.Platform = strings.Join(names, ",")
	if d.Assumed != "" {
		p.Target.Notes = append([]string{"planned against an assumed host state (" + d.Assumed + "), not the NICs: RDMA devices, GIDs and control files are only what that state holds"}, p.Target.Notes...)
	}
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

// dcbSetting names the IEEE DCB objects in errors.
const dcbSetting = "DCB (DCBX, APP, PFC, ETS)"

// observe reads one NIC. A missing interface stops there (index 0).
func (d *Driver) observe(nic intent.NIC) (nicObs, []error) {
	o := nicObs{Interface: nic.Interface, Driver: driverName(d.Files, nic.Interface), PCI: pciAddress(d.Files, nic.Interface), Files: map[string]string{}}
	li, err := d.Kernel.Link(nic.Interface)
	if err != nil {
		return o, []error{settingErr(nic.Interface, "link", err)}
	}
	o.index, o.Index, o.MTU, o.MaxMTU = li.Index, li.Index, li.MTU, li.MaxMTU
	o.SpeedMbps = linkSpeed(d.Files, nic.Interface)
	for _, dir := range []string{"sys/kernel/config/rdma_cm", "sys/kernel/config/rdma_cm/" + nic.RDMADevice, bnxtCCRoot, bnxtCCRoot + "/" + nic.RDMADevice} {
		if nic.RDMADevice != "" && isDir(d.Files, dir) {
			o.Dirs = append(o.Dirs, dir)
		}
	}
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
		errs = append(errs, settingErr(nic.Interface, dcbSetting, err))
	}
	if pa, err := d.Kernel.Pause(nic.Interface); err == nil {
		o.Pause = &pa
	} else if !errors.Is(err, syscall.EOPNOTSUPP) {
		errs = append(errs, settingErr(nic.Interface, "pause", err))
	}
	d.observeStorm(&o)
	return o, errs
}

// basis is o as it enters the plan's Basis hash: the configuration only.
// The PFC requests/indications counters (pause frames sent and received)
// move with traffic on a live lossless link; hashing them would make every
// plan of a busy host stale before apply could use it.
func (o nicObs) basis() nicObs {
	o.SpeedMbps = 0 // reads -1 while a PFC change flaps the mlx5 link
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
