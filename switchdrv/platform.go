package switchdrv

import (
	"context"
	"fmt"
	"sort"
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/profile"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
)

// Platform compiles the intent for one switch platform. Compile is pure: no
// I/O, no printing, deterministic output.
type Platform interface {
	Name() intent.Platform
	Quirks() Quirks
	Compile(f *intent.Fabric, sw *intent.Switch) (*Desired, error)
}

// Refiner is implemented by platforms whose payload depends on what the
// switch already holds (SONiC: which keys exist, their key ranges, the
// fields that already hold what the intent wants). Plan reads the paths
// Discover names, then Refine rewrites d for that state: the payload is
// planned against the switch, not only compiled from the intent.
type Refiner interface {
	// Discover lists the subtrees (e.g. whole tables) plan reads before
	// it finalises d.
	Discover(d *Desired) []*gnmipb.Path
	// Refine adjusts d to the observed state; read returns the value at a
	// path inside the discovered subtrees (module prefixes stripped) and
	// whether it exists.
	Refine(d *Desired, read func(*gnmipb.Path) (any, bool)) error
}

// Prober is implemented by platforms that read facts of the switch beyond
// its configuration before plan refines d (SONiC: the image's build
// version, which says the branch the switch runs). Probe records what it
// read in d (Build, Notes); an error is a plan error of the switch (the
// intent's profile contradicts the switch). A switch that cannot answer is
// no error: Probe says so in a note.
type Prober interface {
	Probe(ctx context.Context, c *transport.Client, d *Desired) error
}

// Requirement is one fact of the switch the intent relies on that the
// payload does not write.
type Requirement struct {
	// Path is what plan reads (a config Get; absent is no error).
	Path *gnmipb.Path
	// Check says what the switch lacks given the value at Path (ok false:
	// absent) and read, which gives the value at any other requirement's
	// path (e.g. a system-wide default); nil when the switch has what the
	// intent needs. A nil Check only reads Path for the others.
	Check func(v any, ok bool, read func(*gnmipb.Path) (any, bool)) *plan.Lack
}

// SetErrorExplainer is implemented by platforms that know what a target's
// Set errors mean (e.g. a read-only gNMI server) and can say what to do.
type SetErrorExplainer interface {
	ExplainSetError(err error) error
}

// Desired is the configuration fabricctl wants on one switch, as the gNMI
// operations that put it there. Replaces are subtrees fabricctl owns
// (idempotent replace); Updates are single leaves or CLI lines merged in.
// The paths of Replaces and Updates are also what plan reads back with Get.
type Desired struct {
	Switch   string
	Platform intent.Platform
	// Profile is the switch's release profile name (intent switch
	// profile; "" = the platform's default).
	Profile string
	// Build is the software build the switch reported (Prober), "" when
	// not read.
	Build    string
	Encoding gnmipb.Encoding
	Replaces []*gnmipb.Update
	Updates  []*gnmipb.Update
	// Deletes are subtrees fabricctl owns that the intent wants absent
	// (e.g. SONiC PFC_WD|<port> when the watchdog is off: SONiC keeps
	// watching a port while its entry exists). Plan lists and sends only
	// those present on the switch.
	Deletes []*gnmipb.Path
	// Owned are the lists whose FABRICCTL entries plan deletes when the
	// intent no longer produces them (stale owned objects).
	Owned []Owned
	// Notes are things the platform cannot express (e.g. PFC on plain
	// OpenConfig) or that need operator action.
	Notes []string
	// Requires are facts of the switch the intent relies on that the
	// payload does not write (SR Linux: the subinterface each classifier
	// attaches to, its ip-mtu). Plan reads their paths and asks each
	// Check what the switch lacks.
	Requires []Requirement
	// Lacks are what the switch lacks of what the intent asks and the
	// payload cannot give it, found by Refine or Probe (SONiC: a PFC
	// watchdog never started) or by the Requires checks. Plan puts them in
	// the target's plan (plan.TargetPlan.Lacks).
	Lacks []plan.Lack

	// values are the values Replace and Update encoded, by update, so
	// that plan compares against them without parsing their JSON
	// (decodedValues).
	values map[*gnmipb.Update]compiled
	// arena holds the JSON of the values (jsonUpdate).
	arena []byte
	// msgs are the messages of the updates Replace, Update and
	// UpdateJSON make, allocated a block at a time (newUpdate).
	msgs updateBlock
}

// compiled is a value Replace or Update encoded: the Go value and whether
// its text is what jtree.ExactText writes (appendSorted).
type compiled struct {
	v     any
	exact bool
}

// SetRequest returns the one SetRequest that applies d.
func (d *Desired) SetRequest() *gnmipb.SetRequest {
	return &gnmipb.SetRequest{Delete: d.Deletes, Replace: d.Replaces, Update: d.Updates}
}

// Quirks are the documented per-platform differences, as data. They are read
// from the platform's profile (internal/profile): QuirksFor builds them, so
// check, the compilers and the twins agree.
type Quirks struct {
	// PFC is false where the platform's model cannot express PFC at all.
	PFC bool
	// MaxLosslessPriorities is the number of lossless priorities per port the
	// platform supports by default.
	MaxLosslessPriorities int
	// BufferCellBytes is the buffer cell size thresholds are rounded up to on
	// read-back (0 = exact). Drift comparison tolerates one cell.
	BufferCellBytes int64
	// Origin is the gNMI path origin for the native model ("" = none).
	Origin string
	// CLIFallback: settings the model lacks are sent as CLI over gNMI (origin "cli").
	CLIFallback bool
	// WatchdogMin/WatchdogMax bound the PFC watchdog detection timer.
	WatchdogMin, WatchdogMax int // milliseconds
	// SchemaDefaults: the platform's targets may report YANG default leaves
	// they populated, or omit leaves equal to their default, so Compare
	// fills the defaults of the platform's YANG (yangcheck.Platform) into
	// both sides of a replaced subtree and into the observed side of a
	// merged one before comparing.
	SchemaDefaults bool
	// Defaults fills the platform's YANG defaults (a *yangcheck.Schema);
	// Engine sets it from Engine.Defaults. switchdrv cannot import
	// yangcheck itself: yangcheck's tests compile the examples with the
	// switchdrv compilers.
	Defaults DefaultsFiller
	// Profile is the release profile the quirks were read from (all the
	// other platform facts: MTU meaning, timer steps, feature set, write
	// semantics, factory defaults).
	Profile *profile.Profile
}

// QuirksFor returns the quirks of profile p.
func QuirksFor(p *profile.Profile) Quirks {
	return Quirks{
		PFC:                   p.PFC,
		MaxLosslessPriorities: p.MaxLosslessPriorities,
		BufferCellBytes:       p.BufferCellBytes,
		Origin:                p.Origin,
		CLIFallback:           p.CLIFallback,
		WatchdogMin:           p.Watchdog.Detect.MinMS,
		WatchdogMax:           p.Watchdog.Detect.MaxMS,
		Profile:               p,
		// Every platform but SONiC (CONFIG_DB hashes, not YANG data
		// paths) is compared with schema defaults filled (issue 10 item 18).
		SchemaDefaults: p.Platform != string(intent.PlatformSONiC),
	}
}

// DefaultQuirks returns the quirks of the default profile of platform; it
// panics on a platform without a profile (a build defect: every platform
// package registers one that has).
func DefaultQuirks(platform intent.Platform) Quirks {
	p, err := profile.Default(string(platform))
	if err != nil {
		panic("switchdrv: " + err.Error())
	}
	return QuirksFor(p)
}

// DefaultsFiller fills the YANG default values into a decoded JSON value at
// a data path (yangcheck.Schema implements it).
type DefaultsFiller interface {
	FillDefaults(p *gnmipb.Path, v any) error
}

// Registry holds the platforms a fabricctl binary knows. Build one with
// NewRegistry and fill it with each platform package's Register.
type Registry struct {
	m map[intent.Platform]Platform
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{m: map[intent.Platform]Platform{}} }

// Register adds p; a second platform with the same name is an error.
func (r *Registry) Register(p Platform) error {
	if _, ok := r.m[p.Name()]; ok {
		return fmt.Errorf("switch platform %q already registered", p.Name())
	}
	r.m[p.Name()] = p
	return nil
}

// Lookup returns the named platform; the error lists the known ones.
func (r *Registry) Lookup(name intent.Platform) (Platform, error) {
	if p, ok := r.m[name]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("unknown switch platform %q (known: %s)", name, strings.Join(r.names(), ", "))
}

func (r *Registry) names() []string {
	var out []string
	for n := range r.m {
		out = append(out, string(n))
	}
	sort.Strings(out)
	return out
}
