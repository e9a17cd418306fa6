package hostdrv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fabricctl/fabricctl/hostdrv/internal/dcbnl"
	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/durable"
	"github.com/fabricctl/fabricctl/internal/ownfs"
	"github.com/fabricctl/fabricctl/plan"
)

// Outcome is what happened to one step of an apply.
type Outcome string

// Step outcomes.
const (
	Applied      Outcome = "applied"
	Failed       Outcome = "failed"
	NotAttempted Outcome = "not attempted"
)

// StepResult is the outcome of one step.
type StepResult struct {
	Path    string  `json:"path"`
	Command string  `json:"command"`
	Outcome Outcome `json:"outcome"`
	Err     string  `json:"error,omitempty"`
}

func (r StepResult) String() string {
	s := fmt.Sprintf("%s: %s (%s)", r.Outcome, r.Path, r.Command)
	if r.Err != "" {
		s += ": " + r.Err
	}
	return s
}

// ApplyOptions change how ApplyWith writes.
type ApplyOptions struct {
	// Partial writes the settings that could be planned even when the plan
	// has errors (a setting that could not be read, a buffer the driver
	// would refuse). Without it such a plan writes nothing.
	Partial bool
	// NoRollback keeps going past a failed step and leaves the host as it
	// is; without it the first failure stops the apply and the host is put
	// back to the backup taken before the first write.
	NoRollback bool
	// BackupFile is where the backup is written (mode 0600) before the first
	// write; "" keeps it in memory only (rollback still works).
	BackupFile string
}

// ApplyResult says what an apply did.
type ApplyResult struct {
	// ReadBack is the plan observed after the apply (nil when none was made).
	ReadBack *Plan
	// Steps has one entry per step of the plan, in order.
	Steps []StepResult
	// Backup is the observed state before the first write (nil when nothing
	// was to be written); BackupFile where it was saved.
	Backup     *Backup
	BackupFile string
	// Rollback are the steps of the rollback, when one ran; RolledBack is
	// true when it ran and read back equal to the backup.
	Rollback   []StepResult
	RolledBack bool
}

// Written returns the number of steps applied.
func (r *ApplyResult) Written() int {
	n := 0
	if r == nil {
		return 0
	}
	for _, s := range r.Steps {
		if s.Outcome == Applied {
			n++
		}
	}
	return n
}

// Notes renders the outcomes as plan notes, one line per step, so every
// output format (and the fleet, which reads the JSON plan) carries them.
func (r *ApplyResult) Notes() []string {
	if r == nil {
		return nil
	}
	var out []string
	if r.BackupFile != "" {
		out = append(out, "backup: "+r.BackupFile)
	}
	for _, s := range r.Steps {
		out = append(out, "step "+s.String())
	}
	for _, s := range r.Rollback {
		out = append(out, "rollback step "+s.String())
	}
	switch {
	case r.RolledBack:
		out = append(out, "rolled back: the host reads back as the backup")
	case len(r.Rollback) > 0:
		out = append(out, "rollback did not complete: the host is partly written")
	}
	return out
}

// Backup is a host's observed QoS state: what Plan read from every NIC
// (the plan's read-back), saved before apply writes and put back by
// Restore.
type Backup struct {
	Version int       `json:"version"`
	Host    string    `json:"host"`
	Taken   time.Time `json:"taken"`
	NICs    []nicObs  `json:"nics"`
}

// BackupVersion is the backup file format.
const BackupVersion = 1

// Backup returns p's observation as a backup.
func (p *Plan) Backup() *Backup {
	b := &Backup{Version: BackupVersion, Taken: time.Now().UTC()}
	if p.host != nil {
		b.Host = p.host.Name
	} else if p.backup != nil {
		b.Host = p.backup.Host
	}
	for _, o := range p.obs {
		if o.index == 0 {
			continue // missing interface: nothing to restore
		}
		b.NICs = append(b.NICs, o.basis())
	}
	return b
}

// WriteBackup writes b to file with mode 0600 (the directory is created
// 0700 when missing, and refused when another user owns it or may write
// it: they could swap the backup that host restore writes back). The file
// is replaced atomically.
func WriteBackup(file string, b *Backup) error {
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	if err := ownfs.MkdirPrivate(filepath.Dir(file)); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".fabricctl-backup-*")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("backup: %w", err)
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("backup %s: %w", file, err)
	}
	// The data on disk before the name points at it, and the name on disk
	// before the host is changed: a power loss after apply must not leave
	// an empty or nameless backup.
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("backup %s: %w", file, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("backup %s: %w", file, err)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := syncDir(filepath.Dir(file)); err != nil {
		return fmt.Errorf("backup %s: sync directory: %w", file, err)
	}
	return nil
}

// syncDir is durable.SyncDir, a variable so that tests see it called.
var syncDir = durable.SyncDir

// ReadBackup reads a backup file written by WriteBackup; one another user
// owns, or others may write, is refused (ownfs.ReadTrusted).
func ReadBackup(file string) (*Backup, error) {
	data, err := ownfs.ReadTrusted(file)
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	var b Backup
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("backup %s: not a fabricctl host backup: %w", file, err)
	}
	if b.Version != BackupVersion {
		return nil, fmt.Errorf("backup %s: format version %d, this fabricctl reads %d", file, b.Version, BackupVersion)
	}
	if len(b.NICs) == 0 {
		return nil, fmt.Errorf("backup %s: no interfaces in it", file)
	}
	for i, n := range b.NICs {
		if err := plainName(n.Interface, 15); err != nil {
			return nil, fmt.Errorf("backup %s: nics[%d].interface %q: %w", file, i, n.Interface, err)
		}
		for fp := range n.Files {
			if !underSys(fp) {
				return nil, fmt.Errorf("backup %s: nics[%d].files: %q is not a path under /sys", file, i, fp)
			}
		}
		for _, dir := range n.Dirs {
			if !underSys(dir) {
				return nil, fmt.Errorf("backup %s: nics[%d].dirs: %q is not a path under /sys", file, i, dir)
			}
		}
	}
	return &b, nil
}

// Apply carries out p as ApplyWith does with Partial and NoRollback: every
// step that can run runs, and the host is left as it is. The returned plan is
// the read-back.
func (d *Driver) Apply(ctx context.Context, p *Plan) (*Plan, error) {
	res, err := d.ApplyWith(ctx, p, ApplyOptions{Partial: true, NoRollback: true})
	if res == nil {
		return nil, err
	}
	if res.ReadBack == nil && err != nil {
		return nil, err
	}
	return res.ReadBack, err
}

// ApplyWith carries out p: it observes again and refuses a stale plan
// (plan.ErrStale) or, without opts.Partial, a plan with errors (nothing is
// written then); saves the observation as a backup before the first write;
// runs the steps in order; and reads back. On a failed step it stops and
// restores the backup (verified by reading back), or with opts.NoRollback
// keeps going so unrelated settings still converge. The result has the
// outcome of every step.
func (d *Driver) ApplyWith(ctx context.Context, p *Plan, opts ApplyOptions) (*ApplyResult, error) {
	res := &ApplyResult{}
	now, perr := d.replan(ctx, p)
	if now == nil {
		return res, perr
	}
	res.ReadBack = now
	name := p.Target.Name
	if now.Target.Basis != p.Target.Basis {
		return res, fmt.Errorf("host %s: %w", name, plan.ErrStale)
	}
	for _, s := range p.Steps {
		res.Steps = append(res.Steps, StepResult{Path: s.Path, Command: s.Command, Outcome: NotAttempted})
	}
	if perr != nil && !opts.Partial {
		return res, fmt.Errorf("host %s: nothing written: the plan has errors (fix them, or use --partial to write the settings that could be planned): %w", name, perr)
	}
	if len(p.Steps) == 0 {
		return res, perr // nothing to write: the fresh observation is the read-back
	}
	res.Backup = now.Backup()
	if opts.BackupFile != "" {
		if err := WriteBackup(opts.BackupFile, res.Backup); err != nil {
			return res, fmt.Errorf("host %s: nothing written: %w", name, err)
		}
		res.BackupFile = opts.BackupFile
	}
	log := d.log().With("target", name)
	var errs []error
	failed := false
	for i, s := range p.Steps {
		if err := ctx.Err(); err != nil {
			// Half-applied: say what was written, so nobody has to guess.
			var done []string
			for _, r := range res.Steps[:i] {
				if r.Outcome == Applied {
					done = append(done, r.Path)
				}
			}
			ds := "none"
			if len(done) > 0 {
				ds = strings.Join(done, ", ")
			}
			res.ReadBack = nil
			return res, fmt.Errorf("host %s: apply interrupted after %d of %d steps (applied: %s; apply again to finish, or host restore --backup): %w",
				name, i, len(p.Steps), ds, errors.Join(append(errs, err)...))
		}
		if err := s.run(); err != nil {
			log.Warn("host step failed", "path", s.Path, "err", err)
			res.Steps[i].Outcome, res.Steps[i].Err = Failed, err.Error()
			errs = append(errs, err)
			failed = true
			if !opts.NoRollback {
				break
			}
			continue
		}
		res.Steps[i].Outcome = Applied
		log.Info("host step applied", "path", s.Path, "command", s.Command)
	}
	if failed && !opts.NoRollback && res.Written() > 0 {
		rb, rerr := d.Restore(ctx, res.Backup)
		if rb != nil {
			res.Rollback = rb.Steps
			res.RolledBack = rerr == nil
		}
		if rerr != nil {
			errs = append(errs, fmt.Errorf("rollback: %w", rerr))
		}
		if rb != nil && rb.ReadBack != nil {
			res.ReadBack = rb.ReadBack
		}
		return res, fmt.Errorf("host %s: apply: %w", name, errors.Join(errs...))
	}
	after, rerr := d.replan(ctx, p)
	res.ReadBack = after
	if after == nil {
		return res, errors.Join(append(errs, rerr)...)
	}
	if len(errs) == 0 {
		for _, c := range after.Target.Changes {
			if c.Action != plan.NoOp && !after.verify[c.Path] {
				errs = append(errs, fmt.Errorf("read-back: %s is %q, want %q", c.Path, c.Before, c.After))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return res, fmt.Errorf("host %s: apply: %w", name, err)
	}
	return res, rerr
}

// replan observes again what p was planned from: the intent, or a backup.
func (d *Driver) replan(ctx context.Context, p *Plan) (*Plan, error) {
	if p.backup != nil {
		return d.PlanRestore(ctx, p.backup)
	}
	return d.Plan(ctx, p.fabric, p.host)
}

// PlanRestore plans putting the host back to backup b: every setting the
// backup holds, compared with what the NICs have now.
func (d *Driver) PlanRestore(ctx context.Context, b *Backup) (*Plan, error) {
	p := &Plan{
		Target: plan.TargetPlan{Name: b.Host, Kind: plan.KindHost, Changes: []plan.Change{}},
		verify: map[string]bool{}, backup: b,
	}
	var errs []error
	var basis []nicObs
	platforms := map[string]bool{}
	nics := append([]nicObs(nil), b.NICs...)
	sort.Slice(nics, func(i, j int) bool { return nics[i].Interface < nics[j].Interface })
	for _, saved := range nics {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("host %s: %w", b.Host, err)
		}
		nic := intent.NIC{Interface: saved.Interface}
		if err := checkNICNames(nic); err != nil {
			errs = append(errs, settingErr(nic.Interface, "name", err))
			continue
		}
		drv := driverName(d.Files, nic.Interface)
		if drv == "" {
			drv = saved.Driver
		}
		be := d.backends().For(drv)
		platforms[be.Name()] = true
		obs, nerrs := d.observe(nic)
		for _, err := range nerrs {
			// A NIC saved without DCB (a veth, a VF: EOPNOTSUPP then too)
			// has no DCB objects to put back.
			var se *SettingError
			if !saved.dcbOrSaved() && errors.As(err, &se) && se.Setting == dcbSetting {
				continue
			}
			errs = append(errs, err)
		}
		if obs.index != 0 {
			errs = append(errs, d.diff(p, be, nic, saved.desired(), &obs)...)
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
	raw, _ := json.Marshal(basis)
	p.Target.Basis = plan.Hash(raw)
	p.Target.Sort()
	if err := errors.Join(errs...); err != nil {
		p.Target.Error = err.Error()
		return p, fmt.Errorf("host %s: restore: %w", b.Host, err)
	}
	return p, nil
}

// Restore puts the host back to backup b and verifies it by reading back:
// the result's ReadBack has no changes when the host is as saved. It keeps
// going past a failed step (a restore is the way back; stopping halfway
// would leave more behind).
func (d *Driver) Restore(ctx context.Context, b *Backup) (*ApplyResult, error) {
	p, err := d.PlanRestore(ctx, b)
	if p == nil {
		return nil, err
	}
	return d.ApplyWith(ctx, p, ApplyOptions{Partial: true, NoRollback: true})
}

// desired turns a saved observation into the state restore writes.
func (o nicObs) desired() NICState {
	st := NICState{Interface: o.Interface, MTU: o.MTU}
	if o.DCBX != nil {
		m := *o.DCBX
		st.DCBX = &m
	}
	if o.dcbOrSaved() {
		st.Apps = map[int]int{}
		for _, a := range o.Apps {
			if a.Selector == dcbnl.SelectorDSCP {
				st.Apps[int(a.Protocol)] = int(a.Priority)
			}
		}
	}
	if o.PFC != nil {
		st.PFC = &PFC{Enable: o.PFC.Enable, Delay: o.PFC.Delay, ManageDelay: o.PFC.Delay != 0}
	}
	if o.ETS != nil {
		st.ETS = &ETS{Willing: o.ETS.Willing != 0, PrioTC: o.ETS.PrioTC, TSA: o.ETS.TSA, BW: o.ETS.TCTxBW}
	}
	if o.Buffer != nil {
		st.Buffer = &Buffer{PrioBuffer: o.Buffer.PrioBuffer, Size: o.Buffer.Size, AllSizes: true}
	}
	if o.Pause != nil {
		pa := *o.Pause
		st.Pause = &pa
	}
	if o.StormTout != nil {
		sp := intent.PauseStormPrevention(time.Duration(*o.StormTout) * time.Millisecond)
		st.StormPrevention = &sp
	}
	paths := make([]string, 0, len(o.Files))
	for fp := range o.Files {
		paths = append(paths, fp)
	}
	sort.Strings(paths)
	for _, fp := range paths {
		st.Files = append(st.Files, File{Setting: fileSetting(fp), Path: fp, Value: o.Files[fp]})
	}
	return st
}

// dcbOrSaved: a saved observation that has any IEEE object was read with
// DCB support, so its APP table (possibly empty) is meaningful.
func (o nicObs) dcbOrSaved() bool {
	return o.dcb || o.PFC != nil || o.ETS != nil || o.DCBX != nil
}

// fileSetting names a control file's plan path suffix the way Desired does
// ("rdma_cm/default_roce_tos", "ecn/roce_np/cnp_dscp", "cc_params/np_cnp_dscp",
// "bnxt_re/cc/cnp_dscp").
func fileSetting(fp string) string {
	for _, mark := range []string{"/ecn/", "/cc_params/"} {
		if i := strings.Index(fp, mark); i >= 0 {
			return strings.TrimPrefix(fp[i:], "/")
		}
	}
	if strings.HasPrefix(fp, "sys/kernel/config/rdma_cm/") {
		return "rdma_cm/" + path.Base(fp)
	}
	if strings.HasPrefix(fp, bnxtCCRoot+"/") {
		return "bnxt_re/cc/" + path.Base(fp)
	}
	return strings.TrimPrefix(fp, "sys/")
}

// underSys reports whether p is a clean relative path under sys/.
func underSys(p string) bool {
	return strings.HasPrefix(p, "sys/") && path.Clean(p) == p && !strings.Contains(p, "..") && fs.ValidPath(p)
}
