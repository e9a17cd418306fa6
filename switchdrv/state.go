package switchdrv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
)

// SnapshotVersion is the format version of snapshot (backup) files.
const SnapshotVersion = 1

// Snapshot is the observed state of the paths fabricctl owns on one switch.
// It is both what plan compares against and the backup file apply writes
// before any change, and restore puts back.
type Snapshot struct {
	Version  int             `json:"version"`
	Switch   string          `json:"switch"`
	Platform intent.Platform `json:"platform,omitempty"`
	Address  string          `json:"address,omitempty"`
	Taken    time.Time       `json:"taken"`
	// Basis is the hash of the observed state (plan.TargetPlan.Basis).
	Basis   string  `json:"basis"`
	Entries []Entry `json:"entries"`

	idx map[string]int // Entries by path (entry)
	// parsed holds each entry's Path parsed (nil where it does not
	// parse), built at the first lookup or covers: they walk every entry
	// for each path asked, and parsing a path string is most of a walk.
	parsed []*gnmipb.Path
}

// parsedPath is entry i's Path parsed, nil when it does not parse.
func (s *Snapshot) parsedPath(i int) *gnmipb.Path {
	if len(s.parsed) != len(s.Entries) {
		s.parsed = make([]*gnmipb.Path, len(s.Entries))
		for j, e := range s.Entries {
			if p, err := transport.ParsePath(e.Path); err == nil {
				s.parsed[j] = p
			}
		}
	}
	return s.parsed[i]
}

// Entry is the state at one owned path.
type Entry struct {
	// Path is "origin:/a/b[k=v]" (origin omitted when empty).
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	// JSON is the value as the switch sent it (RFC 7951 module qualifiers
	// kept, so restore can send it back); ASCII is CLI text for origin cli.
	JSON  json.RawMessage `json:"json,omitempty"`
	ASCII *string         `json:"ascii,omitempty"`

	tree any // JSON decoded, when observe already had it
	// own: tree is JSON decoded and shared with no other entry, so a
	// comparison may fill it in place and then drop it (value decodes
	// JSON again when asked).
	own bool
}

// ownedPaths lists the distinct paths a SetRequest writes, in order, and
// their PathKeys; a key c already has (the value of the same update at the
// same position, decoded.get) is taken from c, not worked out again.
func ownedPaths(req *gnmipb.SetRequest, c *decoded) ([]*gnmipb.Path, []string) {
	n := len(req.GetDelete()) + len(req.GetReplace()) + len(req.GetUpdate())
	out := make([]*gnmipb.Path, 0, n)
	keys := make([]string, 0, n)
	seen := make(map[string]bool, n)
	add := func(p *gnmipb.Path, key string) {
		full := withPrefix(req.GetPrefix(), p)
		if full != p || key == "" {
			key = jtree.PathKey(full)
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, full)
			keys = append(keys, key)
		}
	}
	for _, p := range req.GetDelete() {
		add(p, "")
	}
	// The values of c already have the keys of their paths.
	i := -1
	for _, us := range [][]*gnmipb.Update{req.GetReplace(), req.GetUpdate()} {
		for _, u := range us {
			i++
			key := ""
			if dv := c.held(i, u); dv != nil && dv.ready {
				key = dv.key
			}
			add(u.GetPath(), key)
		}
	}
	return out, keys
}

// withPrefix returns p below prefix: p itself (it is only read) when
// prefix adds nothing to it.
func withPrefix(prefix, p *gnmipb.Path) *gnmipb.Path {
	if len(prefix.GetElem()) == 0 && (p.GetOrigin() != "" || prefix.GetOrigin() == "") && p.GetTarget() == "" {
		return p
	}
	full := &gnmipb.Path{Origin: p.GetOrigin(), Elem: append(slices.Clone(prefix.GetElem()), p.GetElem()...)}
	if full.Origin == "" {
		full.Origin = prefix.GetOrigin()
	}
	return full
}

// RunningConfigCommand is the show command CLI settings are read back with:
// "all" includes defaults, which EOS otherwise leaves out of the running
// configuration (flowcontrol receive off, for one), so a setting fabricctl
// wrote that equals the default still reads back.
const RunningConfigCommand = "show running-config all"

// observe reads paths from the switch into a Snapshot. Targets answer a Get
// in different shapes (one value per path, leaf by leaf, or a parent); all
// updates are merged into one tree per origin and each path is read from it.
// A path the target reports NotFound is recorded as absent. The snapshot
// keeps each value as the switch sent it (for a backup) and has its basis.
func observe(ctx context.Context, c *transport.Client, sw *intent.Switch, paths []*gnmipb.Path) (*Snapshot, error) {
	return observeAs(ctx, c, sw, paths, nil, true, true, nil)
}

// observeValues is observe for a comparison only (verify): the values are
// decoded and kept as trees, without the JSON text and basis a backup needs.
// get is as observeAs takes it.
func observeValues(ctx context.Context, c *transport.Client, sw *intent.Switch, paths []*gnmipb.Path, keys []string, get **transport.PreparedGet) (*Snapshot, error) {
	return observeAs(ctx, c, sw, paths, keys, false, false, get)
}

// observeAs reads paths (keys: their PathKeys, distinct as ownedPaths
// gives them, or nil); full keeps each value's JSON text (a backup),
// withBasis computes the basis (a plan that may be saved and checked for
// staleness later). get, when not nil, holds the GetRequest of paths
// marshalled once for the reads of the same paths (plan's, then verify's):
// made at the first read, sent again at the next.
func observeAs(ctx context.Context, c *transport.Client, sw *intent.Switch, paths []*gnmipb.Path, keys []string, full, withBasis bool, get **transport.PreparedGet) (*Snapshot, error) {
	snap := &Snapshot{Version: SnapshotVersion, Switch: sw.Name, Platform: sw.Platform, Address: sw.Address, Taken: time.Now().UTC()}
	if len(paths) == 0 {
		snap.Basis = snap.basis()
		return snap, nil
	}
	// CLI settings (origin cli) are read as the running configuration
	// with defaults, through a show command; the rest with a config Get.
	modelPaths := paths
	var cliPaths []*gnmipb.Path
	if slices.ContainsFunc(paths, isCLIPath) {
		modelPaths = nil
		for _, p := range paths {
			if isCLIPath(p) {
				cliPaths = append(cliPaths, p)
			} else {
				modelPaths = append(modelPaths, p)
			}
		}
	}
	var notes []*gnmipb.Notification
	var vals [][]byte // with a prepared Get for comparison: each path's JSON
	var err error
	switch {
	case get != nil && len(cliPaths) == 0:
		if *get == nil || !slices.Equal((*get).Paths(), paths) {
			if *get, err = c.PrepareGetConfig(paths); err != nil {
				return nil, err
			}
		}
		if withBasis || len(keys) != len(paths) {
			notes, err = c.GetPrepared(ctx, *get)
		} else {
			// With the paths' distinct keys given: each path's JSON
			// text, which is also what a backup keeps (full).
			vals, notes, err = c.GetPreparedJSON(ctx, *get)
		}
	case len(modelPaths) > 0:
		notes, err = c.GetConfig(ctx, modelPaths)
	}
	if transport.Code(err) == codes.NotFound && len(modelPaths) > 1 {
		notes, err = nil, nil
		for _, p := range modelPaths {
			n, err1 := c.GetConfig(ctx, []*gnmipb.Path{p})
			if transport.Code(err1) == codes.NotFound {
				continue
			}
			if err1 != nil {
				return nil, err1
			}
			notes = append(notes, n...)
		}
	}
	if err != nil {
		return nil, err
	}
	// at is the index of the first asked path of each key; with keys
	// given (distinct, from ownedPaths) it is only built when an answer
	// comes out of order, and is the identity until then.
	var at map[string]int
	index := func() {
		at = make(map[string]int, len(paths))
		for i, k := range keys {
			if _, dup := at[k]; !dup {
				at[k] = i
			}
		}
	}
	if len(keys) != len(paths) {
		keys = make([]string, len(paths))
		for i, p := range paths {
			keys[i] = jtree.PathKey(p)
		}
		index()
	}
	if vals != nil {
		// One JSON value per asked path (GetPreparedJSON): each kept as
		// the switch's text, as the loop below keeps such a value for a
		// comparison (undecoded) and for a backup (the JSON it writes
		// and restore sends back), absent where there is none; a
		// comparison decodes it only when it is not fabricctl's own
		// text (Entry.value, which strips module qualifiers as the
		// loop's trees are stripped).
		snap.Entries = make([]Entry, len(paths))
		for i, v := range vals {
			e := &snap.Entries[i]
			e.Path = keys[i]
			if v != nil && !emptyJSON(v) {
				e.Exists, e.JSON = true, v
			}
		}
		return snap, nil
	}
	// exact[i] holds the value of an update whose path is paths[i] (the
	// usual answer: one value per path asked), found by key; the rest are
	// merged into one tree per origin and looked up in it.
	exact := make([]answer, len(paths))
	trees := map[string]map[string]any{}
	ascii := map[string]string{}
	next := 0 // the asked path the next update likely answers
	for _, n := range notes {
		for _, u := range n.GetUpdate() {
			fp := withPrefix(n.GetPrefix(), u.GetPath())
			// A target answers the paths in the order asked, one value
			// each, as a rule, leaving out those it does not have: the
			// asked path's key then serves, found among the next few.
			var key string
			idx, asked := 0, false
			for next < len(paths) && isCLIPath(paths[next]) {
				next++ // read below, not in this Get
			}
			if j := answered(fp, paths, next); j >= 0 {
				key = keys[j]
				if at == nil {
					idx, asked = j, true
				}
				next = j + 1
			} else {
				key = jtree.PathKey(fp)
				if at == nil {
					index()
				}
			}
			if at != nil {
				idx, asked = at[key]
			}
			byKey := asked && !exact[idx].set && trees[fp.Origin] == nil
			// Member names keep their module qualifiers: the entry's
			// JSON is what restore writes back, and a device rejects an
			// augment member (arista-qos-augments:scheduling) without one.
			// A read for comparison only strips them as it decodes.
			typed := jtree.TypedQualified
			if !full {
				typed = jtree.Typed
				// A read for comparison only keeps the text of a value
				// found by key: compare decodes it only when it is not
				// the text fabricctl would write (desiredValue.sameText),
				// and invalid JSON is its decoding error then ("observed
				// PATH": valid desired text never equals it).
				if b := jsonText(u.GetVal()); b != nil && byKey {
					exact[idx] = answer{v: undecoded{}, raw: b, set: true}
					continue
				}
			}
			v, isASCII, err := typed(u.GetVal())
			if err != nil {
				return nil, fmt.Errorf("switch %s: get %s: %w", sw.Name, key, err)
			}
			if isASCII {
				ascii[key] = v.(string)
				continue
			}
			if byKey {
				exact[idx] = answer{v: v, raw: jsonText(u.GetVal()), set: true}
				continue
			}
			root := trees[fp.Origin]
			if root == nil {
				root = map[string]any{}
				trees[fp.Origin] = root
				// Updates found by key so far go into the tree too, so
				// that paths nested in each other still see one state.
				for i := range exact {
					a := &exact[i]
					if !a.set {
						continue
					}
					ev := a.v
					if _, ok := ev.(undecoded); ok {
						if ev, err = jtree.Decode(a.raw); err != nil {
							return nil, fmt.Errorf("switch %s: get %s: %w", sw.Name, keys[i], err)
						}
					}
					if ep, err := transport.ParsePath(keys[i]); err == nil && ep.GetOrigin() == fp.Origin {
						if err := jtree.Update(root, ep.GetElem(), ev); err != nil {
							return nil, fmt.Errorf("switch %s: get %s: %w", sw.Name, keys[i], err)
						}
						*a = answer{}
					}
				}
			}
			if err := jtree.Update(root, fp.GetElem(), v); err != nil {
				return nil, fmt.Errorf("switch %s: get %s: %w", sw.Name, key, err)
			}
		}
	}
	if len(cliPaths) > 0 {
		text, err := c.GetCLI(ctx, RunningConfigCommand)
		if err != nil {
			return nil, err
		}
		for _, p := range cliPaths {
			ascii[jtree.PathKey(p)] = text
		}
	}
	snap.Entries = make([]Entry, 0, len(paths))
	var finder jtree.Finder // the trees are complete and not changed below
	for i, p := range paths {
		e := Entry{Path: keys[i]}
		var v any
		var ok bool
		a := exact[i]
		if at != nil {
			a = exact[at[e.Path]]
		}
		if text, isCLI := ascii[e.Path]; isCLI {
			s := text
			e.Exists, e.ASCII = true, &s
		} else if v, ok = a.v, a.set; !ok {
			if root := trees[p.GetOrigin()]; root != nil {
				v, ok = finder.Get(root, p.GetElem())
			}
		}
		if _, lazy := v.(undecoded); lazy {
			// Not decoded (a read for comparison): Entry.value decodes
			// the text when asked.
			e.Exists, e.JSON = !emptyJSON(a.raw), a.raw
			if !e.Exists {
				e.JSON = nil
			}
		} else if ok && !isEmpty(v) {
			e.Exists, e.tree = true, v
			if a.set && a.raw != nil {
				e.JSON = a.raw // already the switch's own JSON text
				// Its tree is its own unless another entry has the same
				// path (and so the same tree).
				e.own = at == nil || len(at) == len(paths)
			} else if full {
				b, err := json.Marshal(v)
				if err != nil {
					return nil, fmt.Errorf("switch %s: get %s: %w", sw.Name, e.Path, err)
				}
				e.JSON = b
			}
		}
		snap.Entries = append(snap.Entries, e)
	}
	// The trees keep module qualifiers for the JSON above; comparisons
	// use them stripped. Entries may share subtrees (nested paths), so
	// the JSON of all is taken before any is stripped, in place.
	for i := range snap.Entries {
		if t := snap.Entries[i].tree; t != nil && full {
			snap.Entries[i].tree = jtree.StripPrefixes(t)
		}
	}
	if withBasis {
		snap.Basis = snap.basis()
	}
	return snap, nil
}

// aheadPaths is how many asked paths after the expected one answered
// looks at (transport's reply reader looks as far).
const aheadPaths = 16

// answered is the index of the asked path fp is, looking at paths[next]
// and the few after it, -1 when none of them: the update of a path the
// target does not have is missing, and the next update answers a later
// path.
func answered(fp *gnmipb.Path, paths []*gnmipb.Path, next int) int {
	for j := next; j < len(paths) && j <= next+aheadPaths; j++ {
		if samePath(fp, paths[j]) {
			return j
		}
	}
	return -1
}

// isCLIPath reports whether p is a CLI setting (origin cli).
func isCLIPath(p *gnmipb.Path) bool { return p.GetOrigin() == "cli" }

// samePath reports whether a and b are the same path element for element
// (names as written, keys, origin): then their PathKeys are equal.
func samePath(a, b *gnmipb.Path) bool {
	if a == b {
		return true // an answer's path that is the asked one (GetPrepared)
	}
	ae, be := a.GetElem(), b.GetElem()
	if len(ae) != len(be) || a.GetOrigin() != b.GetOrigin() {
		return false
	}
	for i, x := range ae {
		y := be[i]
		if x.GetName() != y.GetName() || len(x.GetKey()) != len(y.GetKey()) {
			return false
		}
		for k, v := range x.GetKey() {
			if w, ok := y.GetKey()[k]; !ok || w != v {
				return false
			}
		}
	}
	return true
}

// answer is the value an update gave for an asked path (set), its JSON
// text as the switch sent it (raw, nil for other encodings), v undecoded{}
// when only the text is kept.
type answer struct {
	v   any
	raw []byte
	set bool
}

// undecoded stands for a value observeAs keeps as JSON text only.
type undecoded struct{}

// jsonText is the JSON text of a JSON or JSON_IETF value, nil for others.
func jsonText(tv *gnmipb.TypedValue) []byte {
	if b := tv.GetJsonIetfVal(); b != nil {
		return b
	}
	return tv.GetJsonVal()
}

// emptyJSON reports whether valid JSON text b decodes to what isEmpty
// calls empty (null or an empty array).
func emptyJSON(b []byte) bool {
	b = bytes.Trim(b, " \t\r\n")
	if string(b) == "null" {
		return true
	}
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return false
	}
	return len(bytes.Trim(b[1:len(b)-1], " \t\r\n")) == 0
}

func isEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case []any:
		return len(t) == 0
	}
	return false
}

// basis hashes the canonical form of the observed state, so that two reads
// of the same data hash the same whatever the encoding details.
func (s *Snapshot) basis() string {
	var b strings.Builder
	for _, e := range s.Entries {
		b.WriteString(e.Path)
		b.WriteByte('\n')
		for _, l := range e.leaves() {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return plan.Hash([]byte(b.String()))
}

// leaves is the canonical form of an entry: sorted CLI lines, or the
// canonical text of the JSON tree (member and list order do not matter).
func (e Entry) leaves() []string {
	switch {
	case !e.Exists:
		return nil
	case e.ASCII != nil:
		l := cliLines(*e.ASCII)
		sort.Strings(l)
		return l
	}
	v, err := e.value()
	if err != nil {
		return []string{"!invalid " + string(e.JSON)}
	}
	return []string{jtree.Canon(v)}
}

// value decodes the entry's JSON (nil when absent).
func (e Entry) value() (any, error) {
	if !e.Exists || e.ASCII != nil {
		return nil, nil
	}
	if e.tree != nil {
		return e.tree, nil
	}
	return jtree.Decode(e.JSON)
}

// cliLines flattens CLI text into lines that carry their section.
func cliLines(s string) []string { return jtree.CLILines(s) }

// RestoreRequest is the SetRequest that puts the snapshot's state back on a
// switch whose state is now current (read just before): JSON subtrees are
// replaced when they existed and deleted when they did not. CLI text (origin
// cli) is never replaced wholesale, which on a real device would replace the
// whole running configuration: only the lines that differ are sent, "no"
// forms first, as an update.
func (s *Snapshot) RestoreRequest(current *Snapshot) (*gnmipb.SetRequest, error) {
	req := &gnmipb.SetRequest{}
	for _, e := range s.Entries {
		p, err := transport.ParsePath(e.Path)
		if err != nil {
			return nil, fmt.Errorf("switch %s: backup entry: %w", s.Switch, err)
		}
		if isCLIPath(p) {
			var want, have []string
			if e.ASCII != nil {
				want = cliLines(*e.ASCII)
			}
			if c, ok := current.entry(e.Path); ok && c.ASCII != nil {
				have = cliLines(*c.ASCII)
			}
			if text := cliRestore(want, have); text != "" {
				req.Update = append(req.Update, &gnmipb.Update{Path: p, Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_AsciiVal{AsciiVal: text}}})
			}
			continue
		}
		val := &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: e.JSON}}
		switch c, _ := current.entry(e.Path); {
		case !e.Exists:
			req.Delete = append(req.Delete, p)
		case !c.Exists:
			// Gone now (the Set deleted it): create it. Replace of a
			// missing path fails the whole Set on some targets
			// (sonic-gnmi 202411+, PR #239); Update of a missing
			// subtree creates it everywhere.
			req.Update = append(req.Update, &gnmipb.Update{Path: p, Val: val})
		default:
			req.Replace = append(req.Replace, &gnmipb.Update{Path: p, Val: val})
		}
	}
	return req, nil
}

// cliRestore renders the configuration lines that take have back to want:
// "no" for lines added since (unless a wanted line of the same setting
// replaces them anyway), then the missing lines.
func cliRestore(want, have []string) string {
	keys := map[string]bool{}
	for _, l := range want {
		if k, ok := jtree.CLIKey(l); ok {
			keys[k] = true
		}
	}
	var b strings.Builder
	// write renders one flat line inside its sections (EOS nests them:
	// interface > tx-queue), prefix on the line itself.
	write := func(l, prefix string) {
		parts := strings.Split(l, jtree.CLISep)
		last := len(parts) - 1
		for d, p := range parts[:last] {
			fmt.Fprintf(&b, "%s%s\n", strings.Repeat("   ", d), p)
		}
		fmt.Fprintf(&b, "%s%s%s\n", strings.Repeat("   ", last), prefix, parts[last])
		if last > 0 {
			b.WriteString("!\n")
		}
	}
	removed := map[string]bool{} // lines removed with "no", sections whole
	inRemoved := func(l string) bool {
		for i := strings.Index(l, jtree.CLISep); i >= 0; {
			if removed[l[:i]] {
				return true
			}
			j := strings.Index(l[i+len(jtree.CLISep):], jtree.CLISep)
			if j < 0 {
				return false
			}
			i += len(jtree.CLISep) + j
		}
		return false
	}
	for _, l := range have {
		if slices.Contains(want, l) {
			continue
		}
		if k, ok := jtree.CLIKey(l); ok && keys[k] {
			continue
		}
		if inRemoved(l) {
			continue // "no <section>" took it away already
		}
		removed[l] = true
		write(l, "no ")
	}
	for _, l := range want {
		if !slices.Contains(have, l) {
			write(l, "")
		}
	}
	return b.String()
}

// paths returns the snapshot's paths.
func (s *Snapshot) paths() ([]*gnmipb.Path, error) {
	out := make([]*gnmipb.Path, len(s.Entries))
	for i, e := range s.Entries {
		p, err := transport.ParsePath(e.Path)
		if err != nil {
			return nil, fmt.Errorf("switch %s: backup entry: %w", s.Switch, err)
		}
		out[i] = p
	}
	return out, nil
}

// within returns the snapshot of paths taken from s, the way observe would
// read them, or nil when a path lies outside s's subtrees. Values lose their
// module qualifiers (lookup strips them): use it for targets without any
// (SONiC CONFIG_DB), whose backups restore the same either way.
func (s *Snapshot) within(paths []*gnmipb.Path) *Snapshot {
	out := &Snapshot{Version: s.Version, Switch: s.Switch, Platform: s.Platform, Address: s.Address, Taken: s.Taken}
	for _, p := range paths {
		if !s.covers(p) {
			return nil
		}
		e := Entry{Path: jtree.PathKey(p)}
		if v, ok := s.lookup(p); ok && !isEmpty(v) {
			b, err := json.Marshal(v)
			if err != nil {
				return nil
			}
			e.Exists, e.JSON, e.tree = true, b, jtree.Clone(v)
		}
		out.Entries = append(out.Entries, e)
	}
	out.Basis = out.basis()
	return out
}

// covers says whether p lies inside one of s's read paths.
func (s *Snapshot) covers(p *gnmipb.Path) bool {
	for i, e := range s.Entries {
		ep := s.parsedPath(i)
		if ep == nil || ep.GetOrigin() != p.GetOrigin() || len(ep.GetElem()) > len(p.GetElem()) || e.ASCII != nil {
			continue
		}
		if slices.EqualFunc(ep.GetElem(), p.GetElem()[:len(ep.GetElem())], func(a, b *gnmipb.PathElem) bool {
			return a.GetName() == b.GetName() && maps.Equal(a.GetKey(), b.GetKey())
		}) {
			return true
		}
	}
	return false
}

// lookup returns the value at p inside the snapshot's subtrees (module
// prefixes stripped), for Refiner.Refine.
func (s *Snapshot) lookup(p *gnmipb.Path) (any, bool) {
	// Most paths asked are read paths themselves (a Requirement's): found
	// by key, no path parsed.
	if i := s.entryIndex(jtree.PathKey(p)); i >= 0 && s.Entries[i].Exists {
		if v, err := s.Entries[i].value(); err == nil {
			return v, true
		}
	}
	for i, e := range s.Entries {
		ep := s.parsedPath(i)
		if ep == nil || !e.Exists || ep.GetOrigin() != p.GetOrigin() || len(ep.GetElem()) > len(p.GetElem()) {
			continue
		}
		if !slices.EqualFunc(ep.GetElem(), p.GetElem()[:len(ep.GetElem())], func(a, b *gnmipb.PathElem) bool {
			return a.GetName() == b.GetName() && maps.Equal(a.GetKey(), b.GetKey())
		}) {
			continue
		}
		v, err := e.value()
		if err != nil {
			continue
		}
		if rest := p.GetElem()[len(ep.GetElem()):]; len(rest) > 0 {
			root, ok := v.(map[string]any)
			if !ok {
				continue
			}
			if v, ok = jtree.Get(root, rest); !ok {
				continue
			}
		}
		return v, true
	}
	return nil, false
}

func (s *Snapshot) entry(path string) (Entry, bool) {
	if i := s.entryIndex(path); i >= 0 {
		return s.Entries[i], true
	}
	return Entry{}, false
}

// entryIndexAt is entryIndex, looking at index hint first: compare walks
// the updates in the order the snapshot's entries were read in (one per
// owned path), so the next entry is usually the one after the last found.
func (s *Snapshot) entryIndexAt(path string, hint int) int {
	if s != nil && hint >= 0 && hint < len(s.Entries) && s.Entries[hint].Path == path {
		return hint
	}
	return s.entryIndex(path)
}

// entryIndex is the index of path's entry in s.Entries, -1 when none.
func (s *Snapshot) entryIndex(path string) int {
	if s == nil {
		return -1
	}
	if len(s.Entries) < 8 {
		for i, e := range s.Entries {
			if e.Path == path {
				return i
			}
		}
		return -1
	}
	if len(s.idx) != len(s.Entries) {
		s.idx = make(map[string]int, len(s.Entries))
		for i, e := range s.Entries {
			s.idx[e.Path] = i
		}
	}
	if i, ok := s.idx[path]; ok && s.Entries[i].Path == path {
		return i
	}
	return -1
}
