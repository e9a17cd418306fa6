package plan

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// ErrStale is returned when a saved plan's observed state no longer matches
// the target (someone changed it since the plan was made).
var ErrStale = errors.New("plan is stale: the target changed since it was planned")

// Action is what a change does to one path.
type Action int

const (
	NoOp Action = iota
	Create
	Update
	Delete
)

var actionNames = [...]string{"no-op", "create", "update", "delete"}
var actionSymbols = [...]string{" ", "+", "~", "-"}

func (a Action) String() string {
	if a < 0 || int(a) >= len(actionNames) {
		return fmt.Sprintf("Action(%d)", int(a))
	}
	return actionNames[a]
}

// Symbol is the one-character diff marker of the action.
func (a Action) Symbol() string {
	if a < 0 || int(a) >= len(actionSymbols) {
		return "?"
	}
	return actionSymbols[a]
}

// MarshalText encodes the action by name.
func (a Action) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText decodes an action name.
func (a *Action) UnmarshalText(b []byte) error {
	for i, n := range actionNames {
		if n == string(b) {
			*a = Action(i)
			return nil
		}
	}
	return fmt.Errorf("unknown plan action %q", b)
}

// Change is one difference between observed and desired state.
type Change struct {
	Action Action `json:"action"`
	// Path names the setting: a gNMI path on switches, "iface/setting" on hosts.
	Path string `json:"path"`
	// Before and After are the values rendered as text (JSON for structured
	// values); empty for create / delete respectively.
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	// Reason says why the change is needed, in words.
	Reason string `json:"reason,omitempty"`
}

// Target kinds.
const (
	KindSwitch = "switch"
	KindHost   = "host"
)

// TargetPlan is the plan of one switch or host.
type TargetPlan struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Platform string `json:"platform,omitempty"`
	// Basis is a hash of the observed state the plan was computed against.
	// Apply observes again and refuses the plan when it differs (ErrStale).
	Basis   string   `json:"basis"`
	Changes []Change `json:"changes"`
	// Notes are things the operator must know that are not changes (e.g. a
	// setting that needs firmware configuration, or PFC not expressible).
	Notes []string `json:"notes,omitempty"`
	// Lacks are what the intent asks of the target that the target does
	// not have and the plan's changes do not give it (a SONiC switch
	// whose PFC watchdog was never started, an SR Linux port without the
	// subinterface its classifier attaches to, or with an ip-mtu below the
	// RoCE packets): drift that diff reports even where apply cannot make
	// it so, each with what the operator must do.
	Lacks []Lack `json:"lacks,omitempty"`
	// Error is set when the target could not be planned.
	Error string `json:"error,omitempty"`
	// Payload is the platform's desired state the changes lead to (for a switch,
	// the SetRequest as protojson); apply executes exactly this.
	Payload json.RawMessage `json:"payload,omitempty"`
}

// HasChanges reports whether any change is not a no-op.
func (t *TargetPlan) HasChanges() bool {
	for _, c := range t.Changes {
		if c.Action != NoOp {
			return true
		}
	}
	return false
}

// Lack is one thing the intent asks of a target that the target does not
// have, with the reason and the fix.
type Lack struct {
	// What names it: a port, a table, a setting.
	What string `json:"what"`
	// Reason says what is missing and what that breaks.
	Reason string `json:"reason"`
	// Fix is what the operator must do; apply cannot do it.
	Fix string `json:"fix"`
	// Refuses: without it the target would refuse the plan's SetRequest,
	// or the intent cannot work, so plan and apply stop at the target.
	Refuses bool `json:"refuses,omitempty"`
}

// String is the lack on one line: what, reason and fix.
func (l Lack) String() string {
	return l.What + ": " + l.Reason + "; fix: " + l.Fix
}

// HasDrift reports whether the target differs from the intent: a change
// to make, or something it lacks that apply cannot give it.
func (t *TargetPlan) HasDrift() bool { return t.HasChanges() || len(t.Lacks) > 0 }

// Refusals are the target's lacks that stop plan and apply.
func (t *TargetPlan) Refusals() []Lack {
	var out []Lack
	for _, l := range t.Lacks {
		if l.Refuses {
			out = append(out, l)
		}
	}
	return out
}

// Sort orders changes by path, for deterministic output.
func (t *TargetPlan) Sort() {
	sort.SliceStable(t.Changes, func(i, j int) bool { return t.Changes[i].Path < t.Changes[j].Path })
}

// Plan is the plan of a whole fabric.
type Plan struct {
	// Version is the plan file format version.
	Version int       `json:"version"`
	Fabric  string    `json:"fabric"`
	Created time.Time `json:"created"`
	// IntentHash identifies the intent the plan was made from.
	IntentHash string `json:"intentHash,omitempty"`
	// ForcedFindings are the findings of fabricctl check that --force
	// went past when the plan was made ("FC119 policy.roce.tos"): a saved
	// plan says so to whoever reviews or applies it.
	ForcedFindings []string     `json:"forcedFindings,omitempty"`
	Targets        []TargetPlan `json:"targets"`
	// MAC authenticates the rest of the plan with a key only the planning
	// and applying jobs hold ("hmac-sha256:<hex>", Sign); empty when the
	// plan was made without a key.
	MAC string `json:"mac,omitempty"`
}

// ForcedNote is the sentence that names the forced findings, "" when
// there are none.
func (p *Plan) ForcedNote() string {
	return ForcedNote(p.ForcedFindings)
}

// ForcedNote is the sentence that names findings --force went past, ""
// when there are none.
func ForcedNote(forced []string) string {
	if len(forced) == 0 {
		return ""
	}
	what := "findings"
	if len(forced) == 1 {
		what = "finding"
	}
	return fmt.Sprintf("Forced (--force) past %d check %s: %s.", len(forced), what, strings.Join(forced, ", "))
}

// FormatVersion is the current plan file format.
const FormatVersion = 1

// Sort orders targets by kind then name, and each target's changes by path.
func (p *Plan) Sort() {
	sort.SliceStable(p.Targets, func(i, j int) bool {
		if p.Targets[i].Kind != p.Targets[j].Kind {
			return p.Targets[i].Kind > p.Targets[j].Kind // switches before hosts
		}
		return p.Targets[i].Name < p.Targets[j].Name
	})
	for i := range p.Targets {
		p.Targets[i].Sort()
	}
}

// HasChanges reports whether any target has a change.
func (p *Plan) HasChanges() bool {
	for i := range p.Targets {
		if p.Targets[i].HasChanges() {
			return true
		}
	}
	return false
}

// HasDrift reports whether any target has a change or a lack.
func (p *Plan) HasDrift() bool {
	for i := range p.Targets {
		if p.Targets[i].HasDrift() {
			return true
		}
	}
	return false
}

// HasErrors reports whether any target failed to plan.
func (p *Plan) HasErrors() bool {
	for _, t := range p.Targets {
		if t.Error != "" {
			return true
		}
	}
	return false
}

// Summary counts changes by action over all targets.
type Summary struct {
	Targets, Changed, Failed int
	Create, Update, Delete   int
	// Lacks counts what the targets lack that apply cannot write.
	Lacks int
}

// Summarize counts the plan's changes.
func (p *Plan) Summarize() Summary {
	var s Summary
	s.Targets = len(p.Targets)
	for _, t := range p.Targets {
		if t.Error != "" {
			s.Failed++
		}
		if t.HasChanges() {
			s.Changed++
		}
		s.Lacks += len(t.Lacks)
		for _, c := range t.Changes {
			switch c.Action {
			case Create:
				s.Create++
			case Update:
				s.Update++
			case Delete:
				s.Delete++
			}
		}
	}
	return s
}

// macPrefix names the MAC's algorithm in Plan.MAC.
const macPrefix = "hmac-sha256:"

// MinKeyLen is the shortest plan key Sign and Verify accept.
const MinKeyLen = 16

// ErrMAC is returned by Verify when a plan's MAC is missing or does not
// match (the plan was edited, or made with another key).
var ErrMAC = errors.New("plan MAC does not verify")

// mac is the HMAC-SHA256 of the plan without its MAC, over its compact JSON
// (struct fields in order, RawMessage payloads compacted: the same bytes
// before saving and after loading the file).
func (p *Plan) mac(key []byte) ([]byte, error) {
	c := *p
	c.MAC = ""
	b, err := json.Marshal(&c)
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, key)
	m.Write(b)
	return m.Sum(nil), nil
}

// Sign sets p.MAC with key. The key itself is never part of the plan.
func (p *Plan) Sign(key []byte) error {
	if len(key) < MinKeyLen {
		return fmt.Errorf("plan key is %d bytes: want at least %d", len(key), MinKeyLen)
	}
	if p.Version == 0 {
		p.Version = FormatVersion
	}
	sum, err := p.mac(key)
	if err != nil {
		return err
	}
	p.MAC = macPrefix + hex.EncodeToString(sum)
	return nil
}

// Verify checks p.MAC with key: nil when the plan is exactly what was
// signed, else an error wrapping ErrMAC.
func (p *Plan) Verify(key []byte) error {
	if len(key) < MinKeyLen {
		return fmt.Errorf("plan key is %d bytes: want at least %d", len(key), MinKeyLen)
	}
	got, ok := strings.CutPrefix(p.MAC, macPrefix)
	if !ok {
		if p.MAC == "" {
			return fmt.Errorf("%w: the plan has no MAC (made without a plan key)", ErrMAC)
		}
		return fmt.Errorf("%w: unknown MAC algorithm", ErrMAC)
	}
	sum, err := p.mac(key)
	if err != nil {
		return err
	}
	g, err := hex.DecodeString(got)
	if err != nil || !hmac.Equal(g, sum) {
		return fmt.Errorf("%w: the plan was changed after it was made, or made with another key", ErrMAC)
	}
	return nil
}

// Hash returns a stable hex digest of b, for Basis and IntentHash.
func Hash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// Marshal encodes the plan as indented JSON (the plan file format).
func (p *Plan) Marshal() ([]byte, error) {
	if p.Version == 0 {
		p.Version = FormatVersion
	}
	return json.MarshalIndent(p, "", "  ")
}

// Unmarshal decodes a plan file and checks its version.
func Unmarshal(b []byte) (*Plan, error) {
	var p Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("decode plan: %w", err)
	}
	if p.Version != FormatVersion {
		return nil, fmt.Errorf("plan format version %d is not supported (want %d)", p.Version, FormatVersion)
	}
	return &p, nil
}
