package profile

import (
	"fmt"
	"strings"
)

// ASIC is a switching ASIC's buffer facts.
type ASIC struct {
	Name   string `json:"name"`
	Vendor string `json:"vendor"`
	// Family is the vendor's name for the chip.
	Family string `json:"family"`
	// CellBytes is the buffer cell (0 = not published).
	CellBytes int64 `json:"cellBytes"`
	// BufferProfileSize is what SONiC BUFFER_PROFILE "size" means on it:
	// "xon+xoff" (Mellanox: the headroom, size = xon + xoff) or
	// "guaranteed-minimum" (Broadcom: the reserved minimum, passed as
	// SAI_BUFFER_PROFILE_ATTR_BUFFER_SIZE).
	BufferProfileSize string `json:"bufferProfileSize"`
	// PFC: the ASIC supports PFC on its ports.
	PFC     bool     `json:"pfc"`
	Sources []string `json:"sources"`
	Notes   []string `json:"notes"`
}

// BUFFER_PROFILE size conventions.
const (
	SizeXonXoff           = "xon+xoff"
	SizeGuaranteedMinimum = "guaranteed-minimum"
)

// ASICs returns every known ASIC.
func ASICs() []*ASIC {
	must()
	return append([]*ASIC(nil), asics...)
}

// ASICNames returns the known ASIC names in data order.
func ASICNames() []string {
	var out []string
	for _, a := range ASICs() {
		out = append(out, a.Name)
	}
	return out
}

// LookupASIC returns the named ASIC; the error lists the known ones.
func LookupASIC(name string) (*ASIC, error) {
	for _, a := range ASICs() {
		if a.Name == name {
			return a, nil
		}
	}
	return nil, fmt.Errorf("unknown asic %q (known: %s)", name, strings.Join(ASICNames(), ", "))
}
