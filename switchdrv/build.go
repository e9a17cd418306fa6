package switchdrv

import (
	"encoding/json"
	"fmt"
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/portfacts"
	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
)

// Helpers the platform packages build their Desired with.

// Compile is the frame every Platform.Compile shares: it rejects a nil
// fabric or switch, starts a JSON_IETF Desired for sw on platform pl, lets
// compile fill it and names the switch and platform in compile's error.
func Compile(pl intent.Platform, f *intent.Fabric, sw *intent.Switch, compile func(d *Desired) error) (*Desired, error) {
	if f == nil || sw == nil {
		return nil, fmt.Errorf("%s: compile: nil fabric or switch", pl)
	}
	d := &Desired{Switch: sw.Name, Platform: pl, Encoding: gnmipb.Encoding_JSON_IETF}
	if err := compile(d); err != nil {
		return nil, fmt.Errorf("switch %s (%s): %w", sw.Name, pl, err)
	}
	return d, nil
}

// Elem returns the path element name with the keys given as name, value
// pairs (a trailing name without a value is ignored).
func Elem(name string, kv ...string) *gnmipb.PathElem {
	e := &gnmipb.PathElem{Name: name}
	if len(kv) > 0 {
		e.Key = make(map[string]string, len(kv)/2)
		for i := 0; i+1 < len(kv); i += 2 {
			e.Key[kv[i]] = kv[i+1]
		}
	}
	return e
}

// JSONUpdate returns the update that sets the path elems (no origin) to v,
// encoded as a json_ietf_val: json.Marshal's text with every object's
// members in name order (appendSorted), or json.Marshal's own where v has
// a shape appendSorted does not know. Member order means nothing in JSON
// (RFC 7951 orders no members; ygot.EmitJSON sends them sorted too).
// elems must not be empty.
func JSONUpdate(v any, elems ...*gnmipb.PathElem) (*gnmipb.Update, error) {
	b, _, err := encodeValue(nil, v, elems)
	if err != nil {
		return nil, err
	}
	return &gnmipb.Update{
		Path: &gnmipb.Path{Elem: elems},
		Val:  &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: b}},
	}, nil
}

// encodeValue is the JSON JSONUpdate writes of v at elems, appended to
// *arena (nil: into its own slice). The updates of one compile
// (Desired.jsonUpdate) share a few large arrays this way instead of each
// growing its own; each value's slice is capped at its length, so no
// append to one writes into another.
func encodeValue(arena *[]byte, v any, elems []*gnmipb.PathElem) (_ []byte, exact bool, _ error) {
	var b []byte
	ok := false
	if arena != nil {
		var all []byte
		if all, exact, ok = appendSorted(*arena, v); ok {
			start := len(*arena)
			b = all[start:len(all):len(all)]
			*arena = all
		}
	} else {
		b, exact, ok = appendSorted(nil, v)
	}
	if !ok {
		var err error
		if b, err = json.Marshal(v); err != nil {
			return nil, false, fmt.Errorf("marshal %s: %w", elems[len(elems)-1].GetName(), err)
		}
	}
	return b, exact, nil
}

// Replace appends to d.Replaces the JSONUpdate of v at elems.
func (d *Desired) Replace(v any, elems ...*gnmipb.PathElem) error {
	u, err := d.jsonUpdate(v, elems)
	if err != nil {
		return err
	}
	d.Replaces = append(d.Replaces, u)
	return nil
}

// Update appends to d.Updates the JSONUpdate of v at elems.
func (d *Desired) Update(v any, elems ...*gnmipb.PathElem) error {
	u, err := d.jsonUpdate(v, elems)
	if err != nil {
		return err
	}
	d.Updates = append(d.Updates, u)
	return nil
}

// UpdateJSON appends to d.Updates the update that sets the path elems to
// the JSON text js (json_ietf_val), which the caller encoded and does not
// change afterwards: plan decodes it when it needs its value.
func (d *Desired) UpdateJSON(js []byte, elems ...*gnmipb.PathElem) {
	d.Updates = append(d.Updates, d.msgs.newUpdate(elems, js))
}

// jsonUpdate is JSONUpdate keeping v in d, for plan.
func (d *Desired) jsonUpdate(v any, elems []*gnmipb.PathElem) (*gnmipb.Update, error) {
	if cap(d.arena)-len(d.arena) < minArenaFree {
		d.arena = make([]byte, 0, arenaSize)
	}
	b, exact, err := encodeValue(&d.arena, v, elems)
	if err != nil {
		return nil, err
	}
	u := d.msgs.newUpdate(elems, b)
	if d.values == nil {
		d.values = map[*gnmipb.Update]compiled{}
	}
	d.values[u] = compiled{v: v, exact: exact}
	return u, nil
}

// updateBlock hands out the four messages of a JSON update (Update, Path,
// TypedValue and its json_ietf_val case) from arrays: a compile makes
// hundreds of updates, which were four allocations each. The arrays are as
// long as the compiler said it would need (Desired.Reserve), or as many
// as were made so far (8 to 32): a compile of a few updates does not take
// many more, and one of hundreds leaves at most 31 of each unused. The
// messages live as long as the Desired's request does, as the arrays do.
type updateBlock struct {
	ups   []gnmipb.Update
	paths []gnmipb.Path
	vals  []gnmipb.TypedValue
	js    []gnmipb.TypedValue_JsonIetfVal
	made  int
}

// alloc starts new arrays of n messages each.
func (b *updateBlock) alloc(n int) {
	b.ups = make([]gnmipb.Update, n)
	b.paths = make([]gnmipb.Path, n)
	b.vals = make([]gnmipb.TypedValue, n)
	b.js = make([]gnmipb.TypedValue_JsonIetfVal, n)
}

// Reserve says that about n more updates will be made (Replace, Update,
// UpdateJSON): their messages are allocated together, and the map of the
// values plan keeps (decodedValues) is made for n.
func (d *Desired) Reserve(n int) {
	if n <= 0 {
		return
	}
	if n > len(d.msgs.ups) {
		d.msgs.alloc(n)
	}
	if d.values == nil {
		d.values = make(map[*gnmipb.Update]compiled, n)
	}
}

// newUpdate is the update that sets elems to the JSON text js.
func (b *updateBlock) newUpdate(elems []*gnmipb.PathElem, js []byte) *gnmipb.Update {
	if len(b.ups) == 0 {
		b.alloc(min(max(b.made, 8), 32))
	}
	b.made++
	u, p, v, j := &b.ups[0], &b.paths[0], &b.vals[0], &b.js[0]
	b.ups, b.paths, b.vals, b.js = b.ups[1:], b.paths[1:], b.vals[1:], b.js[1:]
	j.JsonIetfVal = js
	v.Value = j
	p.Elem = elems
	u.Path, u.Val = p, v
	return u
}

// The arena JSONUpdate writes a compile's values into: arrays of
// arenaSize, a new one when less than minArenaFree is left.
const (
	arenaSize    = 16 << 10
	minArenaFree = 1 << 10
)

// decodedValues returns d's values for compare, each with the value
// compile encoded, from which compare builds its tree when it needs one
// (treeOf, only where the JSON is still exactly that value's) rather than
// parsing the JSON; a value compared as text is never decoded. d forgets
// the values: compare fills the trees with defaults in place, and they are
// for one plan.
func (d *Desired) decodedValues() *decoded {
	c := newDecoded(d)
	for i, u := range c.ups {
		v, ok := d.values[u]
		if raw := u.GetVal().GetJsonIetfVal(); ok && raw != nil {
			c.vals[i] = desiredValue{raw: raw, src: v.v, exact: v.exact, key: jtree.PathKey(u.GetPath()), last: lastElem(u.GetPath()), ready: true}
		} else if c.vals[i].init(u) != nil {
			// compare meets the value again and reports its error.
			c.vals[i] = desiredValue{}
		}
	}
	d.values = nil
	return c
}

// KeyPart turns a class name into a part of a device key: upper case,
// characters outside [A-Z0-9_-] made '_', cut to max bytes (max <= 0: no
// cut).
func KeyPart(class string, max int) string {
	b := []byte(strings.ToUpper(class))
	for i, ch := range b {
		if !(ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_' || ch == '-') {
			b[i] = '_'
		}
	}
	if max > 0 && len(b) > max {
		b = b[:max]
	}
	return string(b)
}

// PortHeadroomsFor is the programmed headroom of each of sw's ports, in
// order: the ports' derived facts (intent/portfacts Headroom.Programmed,
// the figure check and simulate read), for compilers that want the numbers
// alone.
func PortHeadroomsFor(f *intent.Fabric, sw *intent.Switch) []int64 {
	s := portfacts.SwitchOf(f, sw)
	out := make([]int64, len(sw.Ports))
	for i, p := range sw.Ports {
		out[i] = s.PortHeadroom(f, p).Programmed
	}
	return out
}
