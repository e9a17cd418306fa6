package check

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/portfacts"
	"github.com/fabricctl/fabricctl/internal/profile"
)

// Severity says how bad a finding is.
type Severity int

const (
	// Info is a fact worth knowing (e.g. the computed headroom) that needs no action.
	Info Severity = iota
	// Warning is a risk; the fabric may still work. It fails check only with --strict.
	Warning
	// Error means the fabric will not be lossless (or not deployable) as written.
	Error
)

func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// MarshalText renders the severity as "error", "warning" or "info".
func (s Severity) MarshalText() ([]byte, error) {
	switch s {
	case Info, Warning, Error:
		return []byte(s.String()), nil
	}
	return nil, fmt.Errorf("unknown severity %d", int(s))
}

// UnmarshalText parses "error", "warning" or "info".
func (s *Severity) UnmarshalText(b []byte) error {
	switch string(b) {
	case "info":
		*s = Info
	case "warning":
		*s = Warning
	case "error":
		*s = Error
	default:
		return fmt.Errorf("unknown severity %q (want error, warning or info)", b)
	}
	return nil
}

// Finding is one result of a rule.
type Finding struct {
	ID       string // rule ID, e.g. FC102
	Severity Severity
	Pos      intent.Pos // where to fix it (zero when it comes from a default)
	Path     string     // field path, e.g. policy.classes[roce].ecn.min
	Message  string     // one line: what is wrong, with the numbers
	Fix      string     // one line: how to fix it
	// Edits is Fix as changes of the intent (Apply makes them); nil where
	// the fix is a decision only a person can make (the rule table says
	// which rules those are: Rule.Fix).
	Edits []Edit
}

func (f Finding) String() string {
	var b strings.Builder
	b.WriteString(f.Pos.String())
	b.WriteString(": ")
	b.WriteString(f.Severity.String())
	b.WriteString(" ")
	b.WriteString(f.ID)
	b.WriteString(": ")
	if f.Path != "" {
		b.WriteString(f.Path)
		b.WriteString(": ")
	}
	b.WriteString(f.Message)
	return b.String()
}

// Options carries what Run needs to know beyond the intent.
type Options struct {
	// Platform describes a switch platform; nil means each switch's release
	// profile (switches[].profile, default the platform's default profile). A
	// platform it does not know is reported as an error on the switches using it.
	Platform func(intent.Platform) (PlatformInfo, bool)
	// CellFactor, when > 0, sets the fabric's derived cell factor
	// (intent.Fabric.Derive, what --cell-factor sets for every command)
	// for this run: the headroom is still portfacts', as plan's is.
	CellFactor float64
	// NoEdits leaves every Finding.Edits nil, for an output that shows no
	// edits (check's text report): the rules then build none (FC131 writes
	// one for each too-fast port and its peer, 172,400 on the 2,000-switch
	// benchmark intent). The findings are otherwise those of a run with
	// edits (TestNoEditsSameFindings); the JSON report, Apply and tune
	// leave it false.
	NoEdits bool
}

// Run applies every rule in Rules to f and returns the findings sorted by
// file, line, column and rule ID. It never panics on a well-typed Fabric,
// whatever its values; nil f yields no findings.
func Run(f *intent.Fabric, opts Options) []Finding {
	if f == nil {
		return nil
	}
	if opts.CellFactor > 0 {
		f = f.WithDerive(intent.Derive{CellFactor: opts.CellFactor})
	}
	c := newChecker(f, opts)
	for i := range ruleTable {
		if ruleTable[i].run == nil {
			continue // FC100: the parser's, not ours
		}
		c.rule = &ruleTable[i]
		ruleTable[i].run(c)
	}
	n := 0
	for _, b := range c.findings {
		n += len(b)
	}
	var out []Finding
	if n > 0 {
		out = make([]Finding, 0, n)
	}
	for _, b := range c.findings {
		out = append(out, b...)
	}
	if opts.NoEdits {
		for i := range out {
			out[i].Edits = nil // the few rules that build them regardless
		}
	}
	Sort(out)
	return out
}

// Sort orders findings by file, line, column, rule ID, then path (in
// natural order: links[8] before links[10]) and message.
func Sort(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := &fs[i], &fs[j]
		if c := a.Pos.Compare(b.Pos); c != 0 {
			return c < 0
		}
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		if a.Path != b.Path {
			return intent.NaturalLess(a.Path, b.Path)
		}
		return a.Message < b.Message
	})
}

// Count returns the number of findings of each severity.
func Count(fs []Finding) (errors, warnings, infos int) {
	for _, f := range fs {
		switch f.Severity {
		case Error:
			errors++
		case Warning:
			warnings++
		default:
			infos++
		}
	}
	return errors, warnings, infos
}

// checker is the state shared by the rules of one Run: indexes built once so
// that every rule is linear in the size of the fabric.
type checker struct {
	f    *intent.Fabric
	opts Options
	rule *Rule

	switches map[string]int32            // name -> index in f.Switches (the first of a name)
	hosts    map[string]int32            // name -> index in f.Hosts (the first of a name)
	nics     map[string]map[string]int32 // host -> interface -> index in its NICs, for hosts of many NICs (nicOrdOf)
	// portBase and nicBase number every port and NIC of the fabric: a
	// switch's ports from portBase[its index], a host's NICs from
	// nicBase[its index]. Rules that keep something per port or NIC keep
	// it in a list by that number (portOrd, nicOrd), not in a map.
	portBase, nicBase []int32
	ports, nicsAll    int             // how many
	lossless          []*intent.Class // lossless classes, by priority

	headroom map[headroomKey]headroomValue
	// lastHeadroom is portHeadroom's last answer (a switch's ports
	// mostly share one).
	lastHeadroom *headroomEntry
	// facts are each switch's derived facts (intent/portfacts), the
	// figures the compilers program and simulate uses.
	facts map[*intent.Switch]*portfacts.Switch
	// lastFactsOf and lastFacts are switchFacts' last answer.
	lastFactsOf *intent.Switch
	lastFacts   *portfacts.Switch

	ends  [][2]end                                // per link: its two endpoints, resolved once
	peers map[*intent.Switch]map[*intent.Port]end // switch, port -> the other end of its link (peerOf)
	// nicPeers: host NIC -> the switch port it is cabled to (linkedNIC).
	nicPeers map[intent.Endpoint]*intent.Port
	// skuLosslessByProfile: each profile's SKU lossless buffer profile (skuLossless).
	skuLosslessByProfile map[string]*profile.SONiCLossless
	// skuSharingByProfile: each profile's FC132 facts (skuShared).
	skuSharingByProfile map[string]*skuSharing

	// findings are the findings so far, in blocks that double up to
	// maxFindingBlock: a run of thousands of findings (16,210 on the
	// 2,000-switch benchmark intent) fills them without copying the list
	// as it grows, and Run joins them once.
	findings [][]Finding
	// byProfile: platform facts come from each switch's profile.
	byProfile bool
}

func newChecker(f *intent.Fabric, opts Options) *checker {
	byProfile := opts.Platform == nil
	if opts.Platform == nil {
		opts.Platform = DefaultPlatform
	}
	c := &checker{
		byProfile: byProfile,
		f:         f,
		opts:      opts,
		switches:  make(map[string]int32, len(f.Switches)),
		hosts:     make(map[string]int32, len(f.Hosts)),
		nics:      map[string]map[string]int32{},
		portBase:  make([]int32, len(f.Switches)),
		nicBase:   make([]int32, len(f.Hosts)),
		headroom:  map[headroomKey]headroomValue{},
		facts:     make(map[*intent.Switch]*portfacts.Switch, len(f.Switches)),
	}
	for i := range f.Switches {
		sw := &f.Switches[i]
		c.portBase[i] = int32(c.ports)
		c.ports += len(sw.Ports)
		if _, dup := c.switches[sw.Name]; dup {
			continue // the parser reports duplicates; keep the first
		}
		c.switches[sw.Name] = int32(i)
	}
	for i := range f.Hosts {
		h := &f.Hosts[i]
		c.nicBase[i] = int32(c.nicsAll)
		c.nicsAll += len(h.NICs)
		if _, dup := c.hosts[h.Name]; dup {
			continue
		}
		c.hosts[h.Name] = int32(i)
		if len(h.NICs) <= nicIndexFrom {
			continue // nicOrdOf looks through them
		}
		nm := make(map[string]int32, len(h.NICs))
		for j := range h.NICs {
			if _, dup := nm[h.NICs[j].Interface]; !dup {
				nm[h.NICs[j].Interface] = int32(j)
			}
		}
		c.nics[h.Name] = nm
	}
	c.ends = make([][2]end, len(f.Links))
	next := make([]int32, len(f.Switches))
	for i := range f.Links {
		l := &f.Links[i]
		c.ends[i] = [2]end{c.resolve(l.A, next), c.resolve(l.B, next)}
	}
	for i := range f.Policy.Classes {
		if f.Policy.Classes[i].Lossless {
			c.lossless = append(c.lossless, &f.Policy.Classes[i])
		}
	}
	sort.SliceStable(c.lossless, func(i, j int) bool { return c.lossless[i].Priority < c.lossless[j].Priority })
	return c
}

// report adds a finding of the current rule. The finding points at the
// value path names where it is written; pos is where to point when nothing
// on the path was (a default).
func (c *checker) report(sev Severity, pos intent.Pos, path, fix, format string, a ...any) *Finding {
	return c.reportText(sev, pos, path, fix, fmt.Sprintf(format, a...))
}

// reportText is report of a message written already (a rule that reports
// thousands writes its message without fmt).
func (c *checker) reportText(sev Severity, pos intent.Pos, path, fix, msg string) *Finding {
	if at, ok := c.f.FieldPos(path); ok && at.IsValid() {
		pos = at
	}
	if n := len(c.findings); n == 0 || len(c.findings[n-1]) == cap(c.findings[n-1]) {
		size := 16
		if n > 0 {
			size = min(2*cap(c.findings[n-1]), maxFindingBlock)
		}
		c.findings = append(c.findings, make([]Finding, 0, size))
	}
	b := &c.findings[len(c.findings)-1]
	*b = append(*b, Finding{
		ID:       c.rule.ID,
		Severity: sev,
		Pos:      pos,
		Path:     path,
		Message:  msg,
		Fix:      fix,
	})
	return &(*b)[len(*b)-1]
}

// maxFindingBlock is the largest block of checker.findings.
const maxFindingBlock = 4096

// with sets the finding's mechanical fix (use it right after report, before
// the next report moves the findings).
func (x *Finding) with(edits ...Edit) { x.Edits = edits }

// switchFacts returns sw's derived facts (intent/portfacts), worked out
// once per Run.
func (c *checker) switchFacts(sw *intent.Switch) *portfacts.Switch {
	if c.lastFactsOf == sw { // asked for each of a switch's ports in turn
		return c.lastFacts
	}
	s := c.facts[sw]
	if s == nil {
		s = portfacts.SwitchOf(c.f, sw)
		c.facts[sw] = s
	}
	c.lastFactsOf, c.lastFacts = sw, s
	return s
}

// platform returns the platform info for sw.
func (c *checker) platform(sw *intent.Switch) (PlatformInfo, bool) {
	if c.byProfile {
		return switchPlatform(sw)
	}
	return c.opts.Platform(sw.Platform)
}

// pos returns p, or fallback when p has no position (a value from a default
// or a preset): the finding then points at the nearest enclosing element.
func pos(p intent.Pos, fallback ...intent.Pos) intent.Pos {
	if p.IsValid() {
		return p
	}
	for _, f := range fallback {
		if f.IsValid() {
			return f
		}
	}
	if p.File != "" {
		return p
	}
	for _, f := range fallback {
		if f.File != "" {
			return f
		}
	}
	return p
}

// Field paths, in the intent's YAML key names.
func classPath(cl *intent.Class) string { return "policy.classes[" + cl.Name + "]" }
func switchPath(sw *intent.Switch) string {
	return "inventory.switches[" + sw.Name + "]"
}
func portPath(sw *intent.Switch, p *intent.Port) string {
	return switchPath(sw) + ".ports[" + p.Name + "]"
}
func linkPath(i int) string { return "inventory.links[" + strconv.Itoa(i) + "]" }

// names lists up to max names and says how many more there are.
func names(list []string, max int) string {
	if len(list) <= max {
		return strings.Join(list, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(list[:max], ", "), len(list)-max)
}

// bytesStr renders a byte count exactly, with thousands separators.
func bytesStr(b int64) string {
	neg := b < 0
	if neg {
		b = -b
	}
	s := fmt.Sprint(b)
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out) + " B"
	}
	return string(out) + " B"
}

// endKind says what a link endpoint names.
type endKind int32

const (
	endNone endKind = iota // no switch or host of that name
	endSwitch
	endHost
)

// end is a resolved link endpoint; port or nic is nil when the node exists
// but has no such port or interface. ord is the port's or NIC's number
// (checker.portBase), -1 without one.
type end struct {
	kind endKind
	ord  int32
	sw   *intent.Switch
	port *intent.Port
	host *intent.Host
	nic  *intent.NIC
}

// nicIndexFrom is how many NICs a host has before nicOrdOf looks them up in
// an index rather than through them (most hosts have one to eight).
const nicIndexFrom = 8

// nicOrdOf returns the first NIC named iface of the host named host, or
// nil, and the NIC's number (checker.nicBase), -1 without one.
func (c *checker) nicOrdOf(host, iface string) (*intent.NIC, int32) {
	hi, ok := c.hosts[host]
	if !ok {
		return nil, -1
	}
	return c.nicIn(hi, iface)
}

// nicIn is nicOrdOf of the host at index hi of the fabric's hosts.
func (c *checker) nicIn(hi int32, iface string) (*intent.NIC, int32) {
	h := &c.f.Hosts[hi]
	if m, ok := c.nics[h.Name]; ok {
		if j, ok := m[iface]; ok {
			return &h.NICs[j], c.nicBase[hi] + j
		}
		return nil, -1
	}
	for j := range h.NICs {
		if h.NICs[j].Interface == iface {
			return &h.NICs[j], c.nicBase[hi] + int32(j)
		}
	}
	return nil, -1
}

// resolve finds what endpoint e names: a switch port or a host NIC.
//
// next holds, per switch, the index after the port last found on it: an
// inventory lists a switch's links mostly in the order of its ports, so
// the port asked for next is mostly that one, found without searching.
// A port name is taken there when the port before has another name (the
// ports Parse resolves are sorted and distinct).
func (c *checker) resolve(e intent.Endpoint, next []int32) end {
	if si, ok := c.switches[e.Node]; ok {
		sw := &c.f.Switches[si]
		i := int(next[si])
		if i >= len(sw.Ports) || sw.Ports[i].Name != e.Port || (i > 0 && sw.Ports[i-1].Name == e.Port) {
			i = sw.PortIndex(e.Port)
		}
		if i < 0 {
			return end{kind: endSwitch, ord: -1, sw: sw}
		}
		next[si] = int32(i + 1)
		return end{kind: endSwitch, ord: c.portBase[si] + int32(i), sw: sw, port: &sw.Ports[i]}
	}
	if hi, ok := c.hosts[e.Node]; ok {
		nic, ord := c.nicIn(hi, e.Port)
		return end{kind: endHost, ord: ord, host: &c.f.Hosts[hi], nic: nic}
	}
	return end{ord: -1}
}
