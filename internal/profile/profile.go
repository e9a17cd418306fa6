package profile

import (
	"embed"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fabricctl/fabricctl/internal/gcu"
)

//go:embed data
var dataFS embed.FS

// Profile is one platform release on one hardware model.
type Profile struct {
	// Name is the profile's name in the intent (switches[].profile), e.g.
	// "srlinux-25.3" or "sonic-202411".
	Name string `json:"name"`
	// Platform is the intent platform (srlinux, sonic, eos, openconfig).
	Platform string `json:"platform"`
	// Release is the software release the facts were read from.
	Release string `json:"release"`
	// Order sorts the profiles of a platform from oldest to newest; the
	// newest is the platform's default unless one profile is marked
	// Default.
	Order int `json:"order"`
	// Default marks the platform's default profile when it is not the
	// newest: one whose payloads the newer releases accept too (SONiC:
	// sonic-202411, whose config updater allows the least), so that an
	// intent naming no release plans what every release takes. At most one
	// per platform.
	Default bool `json:"default,omitempty"`
	// Model is the hardware model (or SKU) the profile stands for.
	Model string `json:"model"`
	// ASIC is the model's switching ASIC (a name of ASICs()); "" = unknown.
	ASIC string `json:"asic"`
	// SKU is the model's front panel (zero: not one model, not checked).
	SKU SKU `json:"sku"`
	// Sources name where every fact of the profile was read.
	Sources []string `json:"sources"`

	MTU MTU `json:"mtu"`
	// PFC is false where the platform's configuration model cannot express
	// PFC at all (plain OpenConfig).
	PFC bool `json:"pfc"`
	// SemiLossless says how the platform's model makes a port honour
	// the pause it receives without ever sending pause (policy.mode
	// semi-lossless), with its source; "" where the model has no such
	// knob and the mode is refused (EOS: priority-flow-control
	// priority N no-drop turns sending and honouring on together, and
	// arista-qos-augments has only priorities-no-drop).
	SemiLossless string `json:"semiLossless"`
	// MaxLosslessPriorities per port by default.
	MaxLosslessPriorities int `json:"maxLosslessPriorities"`
	// Watchdog bounds the PFC watchdog timers.
	Watchdog Watchdog `json:"watchdog"`
	// MinWeight and MaxWeight bound the ETS/DWRR scheduler weight (0 = any).
	MinWeight int `json:"minWeight"`
	MaxWeight int `json:"maxWeight"`
	// BufferCellBytes is what buffer thresholds read back rounded up to
	// (0 = exact); compare tolerates one cell.
	BufferCellBytes int64 `json:"bufferCellBytes"`
	// DCBXAdvertise: fabricctl configures the switch to advertise IEEE DCBX.
	DCBXAdvertise bool `json:"dcbxAdvertise"`
	// Origin is the gNMI origin of the native model ("" = none).
	Origin string `json:"origin"`
	// CLIFallback: settings the model lacks go as CLI over gNMI (origin cli).
	CLIFallback bool `json:"cliFallback"`

	// YANG names the module set the profile's payloads are validated
	// against (twins, render --validate, plan --device).
	YANG YANG `json:"yang"`
	// Shapes are the JSON encodings of the leaves fabricctl writes whose
	// YANG differs between the platform's releases.
	Shapes Shapes `json:"shapes"`
	// Features is the YANG feature set of the model and release.
	Features Features `json:"features"`
	// Write is how the device's management layer applies a Set.
	Write Write `json:"write"`
	// Factory describes the datastore of a fresh install.
	Factory Factory `json:"factory"`

	// Notes are facts nothing here could verify, said out loud.
	Notes []string `json:"notes"`

	file string
}

// SKU is the front panel of the model a profile stands for: what check
// holds port speeds to (FC131) while the switch's ASIC is the model's.
type SKU struct {
	Name         string `json:"name"`
	Ports        int    `json:"ports"`
	MaxSpeedGbps int    `json:"maxSpeedGbps"` // the fastest a front-panel port runs
	Source       string `json:"source"`
}

// MTU is what a platform's interface MTU means and the range it takes.
type MTU struct {
	// Meaning: "l2-without-fcs" (SR Linux: Ethernet header included, FCS
	// not) or "ip" (SONiC PORT mtu, EOS mtu: the IP MTU).
	Meaning string `json:"meaning"`
	Min     int    `json:"min"`
	Max     int    `json:"max"`
	// Default is the MTU of a port nobody configured (0 = not known).
	Default int    `json:"default"`
	Source  string `json:"source"`
}

// MTU meanings.
const (
	MTUL2NoFCS = "l2-without-fcs"
	MTUIP      = "ip"
)

// Watchdog bounds the PFC watchdog timers (milliseconds; a zero range is not
// configurable on the platform, or no bound is published, and not checked).
type Watchdog struct {
	Detect  TimerRange `json:"detect"`
	Restore TimerRange `json:"restore"`
	Poll    TimerRange `json:"poll"`
	// PollHalf: the poll interval may be at most half the smaller of detect
	// and restore (EOS refuses a longer one).
	PollHalf bool   `json:"pollHalf"`
	Source   string `json:"source"`
}

// TimerRange is an inclusive range of milliseconds in steps.
type TimerRange struct {
	MinMS  int `json:"minMS"`
	MaxMS  int `json:"maxMS"`
	StepMS int `json:"stepMS"`
}

// IsZero reports whether r is unset.
func (r TimerRange) IsZero() bool { return r.MinMS == 0 && r.MaxMS == 0 }

// Min, Max and Step as durations.
func (r TimerRange) Min() time.Duration  { return time.Duration(r.MinMS) * time.Millisecond }
func (r TimerRange) Max() time.Duration  { return time.Duration(r.MaxMS) * time.Millisecond }
func (r TimerRange) Step() time.Duration { return time.Duration(r.StepMS) * time.Millisecond }

// YANG names a release's module set.
type YANG struct {
	// Release is a module set internal/yangcheck knows (yangcheck.Releases):
	// the release's own modules, shipped, or derived from a newer
	// release's by cited differences.
	Release string `json:"release"`
	// Source says where the release's modules are and how fabricctl has
	// them.
	Source string `json:"source"`
}

// Shapes are release-dependent JSON encodings.
type Shapes struct {
	// PFCPauseFramePriority is how SR Linux pfc-mapping-profile's
	// pfc-pause-frame-priority (received-traffic pfc-queue and
	// received-pfc-pause-frames queue) is written: "leaf" (3) or
	// "leaf-list" ([3]); "" on platforms without it.
	PFCPauseFramePriority string `json:"pfcPauseFramePriority,omitempty"`
	// Source cites the shapes.
	Source string `json:"source,omitempty"`
}

// Shape values.
const (
	ShapeLeaf     = "leaf"
	ShapeLeafList = "leaf-list"
)

// Features is a YANG feature set: every feature listed with its state and
// the reason for it; features not listed take Default.
type Features struct {
	// Module is the YANG module declaring the features ("" = none used).
	Module string `json:"module"`
	// Default is the state of a feature the list does not name.
	Default       bool      `json:"default"`
	DefaultReason string    `json:"defaultReason"`
	List          []Feature `json:"list"`
}

// Feature is one YANG feature's state on the profile and why.
type Feature struct {
	Name   string `json:"name"`
	On     bool   `json:"on"`
	Reason string `json:"reason"`
}

// Write is how the device's management layer applies a SetRequest.
type Write struct {
	// ReplaceMissingKey is what a Replace of a CONFIG_DB key that does not
	// exist does on SONiC: "add" (sonic-gnmi before PR #239) or "fail".
	ReplaceMissingKey string `json:"replaceMissingKey"`
	// ReplaceMissingKeySource cites it.
	ReplaceMissingKeySource string `json:"replaceMissingKeySource"`
	// UpdateKeyReplacesHash: an Update at TABLE/KEY replaces the whole hash
	// (JSON patch "add"); an Update at TABLE/KEY/field sets one field.
	UpdateKeyReplacesHash bool `json:"updateKeyReplacesHash"`
	// PortCriticalTables are CONFIG_DB tables whose per-port entries the
	// generic config updater applies with the port admin-down (a flap).
	PortCriticalTables []string `json:"portCriticalTables"`
	// AddsMissingTables: the config updater adds an empty table the patch
	// writes below when CONFIG_DB has none (sonic-utilities 202511
	// config/main.py append_emptytables_if_required); before, jsonpatch's
	// add under a missing table fails.
	AddsMissingTables bool `json:"addsMissingTables,omitempty"`
	// NativeWrite is false on sonic-gnmi's telemetry container
	// (gnmi_native_write=false): every Set is refused.
	NativeWrite *bool `json:"nativeWrite"`
	// NoNativeSubscribe: the gNMI server refuses a Subscribe on the native
	// origin (sonic-db) as an unsupported origin; CONFIG_DB can then be
	// subscribed only by target (CONFIG_DB, no origin).
	NoNativeSubscribe bool `json:"noNativeSubscribe,omitempty"`
	// NoNativeSubscribeSource cites NoNativeSubscribe.
	NoNativeSubscribeSource string `json:"noNativeSubscribeSource,omitempty"`
	// Defaults is how Get reports YANG default leaves: "" (as written),
	// "populate-defaults" or "trim-defaults".
	Defaults string `json:"defaults"`
	// SetTimeoutSeconds is how long a Set may take on the device before its
	// outcome is known (0 = the client's per-call timeout): a client deadline
	// shorter than the device's own bound turns a Set that is still being
	// applied into an unknown outcome read back mid-apply.
	SetTimeoutSeconds int `json:"setTimeoutSeconds"`
	// SetTimeoutSource cites SetTimeoutSeconds.
	SetTimeoutSource string `json:"setTimeoutSource"`
	// GCU is the field-operation validation of SONiC's generic config
	// updater on this release (nil: none): what it refuses to create or
	// change whatever the YANG models say.
	GCU *gcu.Validators `json:"gcu,omitempty"`
	// Sources cite the write semantics.
	Sources []string `json:"sources"`
}

// SetTimeout is Write.SetTimeoutSeconds as a duration (0 = none given).
func (w Write) SetTimeout() time.Duration { return time.Duration(w.SetTimeoutSeconds) * time.Second }

// Write.ReplaceMissingKey values and Write.Defaults modes.
const (
	ReplaceMissingAdd  = "add"
	ReplaceMissingFail = "fail"
	PopulateDefaults   = "populate-defaults"
	TrimDefaults       = "trim-defaults"
)

// NativeWriteEnabled reports whether the device accepts Sets at all.
func (w Write) NativeWriteEnabled() bool { return w.NativeWrite == nil || *w.NativeWrite }

// Factory is the datastore of a fresh install.
type Factory struct {
	// Kind selects how the datastore is built: "tree" (File is the JSON
	// datastore as it is), "sonic-sku" (File holds the SKU's template
	// output and Ports, expanded per port as the templates do), "empty".
	Kind string `json:"kind"`
	// Origin is the gNMI origin the datastore lives under.
	Origin string `json:"origin"`
	// File is the data file under data/factory.
	File string `json:"file"`
	// PFCWatchdogAtBoot: the SKU enabled the PFC watchdog at boot, so a
	// PFC_WD table exists (SONiC).
	PFCWatchdogAtBoot bool `json:"pfcWatchdogAtBoot"`
	// Sources cite the factory defaults.
	Sources []string `json:"sources"`
}

var (
	loadOnce sync.Once
	loaded   []*Profile
	asics    []*ASIC
	loadErr  error
)

func load() {
	loadOnce.Do(func() { loaded, asics, loadErr = readAll() })
}

func readAll() ([]*Profile, []*ASIC, error) {
	ents, err := dataFS.ReadDir("data/profiles")
	if err != nil {
		return nil, nil, err
	}
	var ps []*Profile
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		file := path.Join("data/profiles", e.Name())
		b, err := dataFS.ReadFile(file)
		if err != nil {
			return nil, nil, err
		}
		p := &Profile{file: file}
		if err := decodeStrict(b, p); err != nil {
			return nil, nil, fmt.Errorf("profile %s: %w", file, err)
		}
		if p.Name+".json" != e.Name() {
			return nil, nil, fmt.Errorf("profile %s: name %q does not match the file name", file, p.Name)
		}
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	b, err := dataFS.ReadFile("data/asics.json")
	if err != nil {
		return nil, nil, err
	}
	var as struct {
		ASICs []*ASIC `json:"asics"`
	}
	if err := decodeStrict(b, &as); err != nil {
		return nil, nil, fmt.Errorf("data/asics.json: %w", err)
	}
	defaults := map[string]string{}
	for _, p := range ps {
		if err := p.valid(as.ASICs); err != nil {
			return nil, nil, fmt.Errorf("profile %s: %w", p.file, err)
		}
		if p.Default {
			if d, ok := defaults[p.Platform]; ok {
				return nil, nil, fmt.Errorf("profile %s: platform %s has a default already (%s)", p.file, p.Platform, d)
			}
			defaults[p.Platform] = p.Name
		}
	}
	return ps, as.ASICs, nil
}

func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func (p *Profile) valid(as []*ASIC) error {
	switch {
	case p.Name == "" || p.Platform == "":
		return fmt.Errorf("name and platform are required")
	case len(p.Sources) == 0:
		return fmt.Errorf("no sources")
	case p.MTU.Meaning != MTUL2NoFCS && p.MTU.Meaning != MTUIP && p.MTU.Meaning != "":
		return fmt.Errorf("mtu meaning %q", p.MTU.Meaning)
	case p.Write.ReplaceMissingKey != "" && p.Write.ReplaceMissingKey != ReplaceMissingAdd && p.Write.ReplaceMissingKey != ReplaceMissingFail:
		return fmt.Errorf("write.replaceMissingKey %q", p.Write.ReplaceMissingKey)
	case p.Write.Defaults != "" && p.Write.Defaults != PopulateDefaults && p.Write.Defaults != TrimDefaults:
		return fmt.Errorf("write.defaults %q", p.Write.Defaults)
	case p.YANG.Release == "" || p.YANG.Source == "":
		return fmt.Errorf("yang.release and yang.source are required: every profile names its module set")
	case p.Shapes.PFCPauseFramePriority != "" && p.Shapes.PFCPauseFramePriority != ShapeLeaf && p.Shapes.PFCPauseFramePriority != ShapeLeafList:
		return fmt.Errorf("shapes.pfcPauseFramePriority %q (want %s or %s)", p.Shapes.PFCPauseFramePriority, ShapeLeaf, ShapeLeafList)
	case p.Platform == "srlinux" && p.Shapes.PFCPauseFramePriority == "":
		return fmt.Errorf("shapes.pfcPauseFramePriority is required on srlinux")
	}
	if p.ASIC != "" && !slices.ContainsFunc(as, func(a *ASIC) bool { return a.Name == p.ASIC }) {
		return fmt.Errorf("unknown asic %q", p.ASIC)
	}
	seen := map[string]bool{}
	for _, f := range p.Features.List {
		if seen[f.Name] {
			return fmt.Errorf("feature %s listed twice", f.Name)
		}
		seen[f.Name] = true
		if f.Reason == "" {
			return fmt.Errorf("feature %s has no reason", f.Name)
		}
	}
	if g := p.Write.GCU; g != nil {
		for _, fn := range append([]string{g.Function}, slices.Sorted(maps.Values(g.Functions))...) {
			if !slices.Contains(gcu.KnownFunctions, fn) {
				return fmt.Errorf("write.gcu: validator %q is not one internal/gcu models", fn)
			}
		}
	}
	switch p.Factory.Kind {
	case "empty", "":
	case "tree", "sonic-sku":
		if _, err := dataFS.ReadFile(path.Join("data/factory", p.Factory.File)); err != nil {
			return fmt.Errorf("factory file: %w", err)
		}
	default:
		return fmt.Errorf("factory kind %q", p.Factory.Kind)
	}
	return nil
}

func must() []*Profile {
	load()
	if loadErr != nil {
		// The data is embedded and a test reads every file: a broken file
		// is a build defect, not a user error.
		panic("profile: embedded data: " + loadErr.Error())
	}
	return loaded
}

// All returns every profile, sorted by name.
func All() []*Profile { return slices.Clone(must()) }

// Names returns the names of the profiles of platform (all when ""), sorted.
func Names(platform string) []string {
	var out []string
	for _, p := range must() {
		if platform == "" || p.Platform == platform {
			out = append(out, p.Name)
		}
	}
	return out
}

// Lookup returns the named profile; the error lists the known ones.
func Lookup(name string) (*Profile, error) {
	for _, p := range must() {
		if p.Name == name {
			return p, nil
		}
	}
	return nil, fmt.Errorf("unknown profile %q (known: %s)", name, strings.Join(Names(""), ", "))
}

// LookupFor returns the named profile of platform: name "" is the
// platform's default; a profile of another platform is an error.
func LookupFor(platform, name string) (*Profile, error) {
	if name == "" {
		return Default(platform)
	}
	p, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	if p.Platform != platform {
		return nil, fmt.Errorf("profile %q is for platform %s, not %s (known for %s: %s)",
			name, p.Platform, platform, platform, strings.Join(Names(platform), ", "))
	}
	return p, nil
}

// Default returns the default profile of platform: the one marked
// Default, else the newest.
func Default(platform string) (*Profile, error) {
	var best *Profile
	for _, p := range must() {
		if p.Platform != platform {
			continue
		}
		if p.Default {
			return p, nil
		}
		if best == nil || p.Order > best.Order {
			best = p
		}
	}
	if best == nil {
		return nil, fmt.Errorf("no profile for platform %q", platform)
	}
	return best, nil
}

// SONiCRelease is the release branch (YYYYMM) a SONiC build_version or
// image tag names: its first "."-separated part of 6 digits (a community
// build of a branch, <branch>.<build number>-<commit>, sonic-buildimage
// functions.sh sonic_get_version; an image tagged by branch, 202405),
// else the first 6 digits of a part of 8 (a build versioned by its branch
// date, 20241110.12); "" for none (master, a private name).
func SONiCRelease(build string) string {
	for _, part := range strings.Split(build, ".") {
		if len(part) != 6 && len(part) != 8 {
			continue
		}
		if !strings.ContainsFunc(part, func(r rune) bool { return r < '0' || r > '9' }) {
			return part[:6]
		}
	}
	return ""
}

// File is the embedded data file the profile was read from.
func (p *Profile) File() string { return p.file }

// FeatureOn reports whether the YANG feature name (without module prefix)
// is enabled on the profile.
func (p *Profile) FeatureOn(name string) bool {
	if i := strings.LastIndexByte(name, ':'); i >= 0 {
		name = name[i+1:]
	}
	for _, f := range p.Features.List {
		if f.Name == name {
			return f.On
		}
	}
	return p.Features.Default
}

// FeatureSet returns the listed features and their states (unlisted ones
// take Features.Default).
func (p *Profile) FeatureSet() map[string]bool {
	m := make(map[string]bool, len(p.Features.List))
	for _, f := range p.Features.List {
		m[f.Name] = f.On
	}
	return m
}

// ASICInfo returns the profile's ASIC (nil when unknown).
func (p *Profile) ASICInfo() *ASIC {
	a, _ := LookupASIC(p.ASIC)
	return a
}

// WithOverrides returns a copy of p with the switch's asic (when not "")
// and the telemetry-container option applied; p is unchanged.
func (p *Profile) WithASIC(asic string) (*Profile, error) {
	if asic == "" {
		return p, nil
	}
	a, err := LookupASIC(asic)
	if err != nil {
		return nil, err
	}
	q := *p
	q.ASIC = a.Name
	if a.CellBytes > 0 && p.BufferCellBytes > 0 {
		q.BufferCellBytes = a.CellBytes
	}
	return &q, nil
}

// Telemetry returns a copy of p as sonic-gnmi's `telemetry` container serves
// it: gnmi_native_write=false, every Set refused.
func (p *Profile) Telemetry() *Profile {
	q := *p
	f := false
	q.Write.NativeWrite = &f
	return &q
}
