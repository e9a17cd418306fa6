package intent

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/fabricctl/fabricctl/internal/profile"
)

// ModelVendor is the fourth headroom model: the xoff the switch vendor
// validated for its ASIC, from the SKU's lookup table as SONiC's static
// buffer model programs it (buffermgrd reads pg_profile_lookup.ini).
const ModelVendor HeadroomModel = "vendor-table"

// ASIC is what fabricctl knows of one switch ASIC family's buffer: the cell
// size (with its source) and, where the vendor publishes one, the lossless
// PG lookup table. Data only, each figure with the file it comes from.
type ASIC struct {
	Name    string
	Aliases []string
	Vendor  string // mellanox, broadcom
	// CellBytes is the buffer cell size (0 = no public figure).
	CellBytes  int64
	CellSource string
	// Table is the vendor's PG lookup table (nil = none published).
	Table *LookupTable
}

// LookupTable is one SKU's pg_profile_lookup.ini.
type LookupTable struct {
	Source string // repository path the rows come from
	Rows   []LookupRow
}

// LookupRow is one line of a pg_profile_lookup.ini: speed, cable length and
// the profile's size, xon and xoff in bytes.
type LookupRow struct {
	Speed       int64 // bits/s
	CableMeters float64
	Size        int64
	Xon         int64
	Xoff        int64
}

// CellFactor is the cell occupancy SONiC's dynamic buffer model multiplies
// in-flight bytes with for this ASIC: sonic-swss
// cfgmgr/buffer_headroom_mellanox.lua with its default
// small_packet_percentage 100 gives worst_case_factor =
// ceil(cell/64) when cell > 128, else ceil(2 x cell / (1 + cell)). That
// script is NVIDIA's; for other vendors the lookup table carries the cell
// effect and the factor is 1.
func (a ASIC) CellFactor() float64 {
	if a.Vendor != "mellanox" || a.CellBytes <= 0 {
		return 1
	}
	c := float64(a.CellBytes)
	if c > 2*64 {
		return math.Ceil(c / 64)
	}
	return math.Ceil(2 * c / (1 + c))
}

const mellanoxASICTable = "sonic-buildimage platform/mellanox/asic_table.j2 (cell_size)"

// kbps lines, as the .ini files write them (speed in Mb/s, cable in m, size, xon, xoff).
func rows(r ...[5]float64) []LookupRow {
	out := make([]LookupRow, len(r))
	for i, x := range r {
		out[i] = LookupRow{Speed: int64(x[0]) * 1_000_000, CableMeters: x[1], Size: int64(x[2]), Xon: int64(x[3]), Xoff: int64(x[4])}
	}
	return out
}

// nokiaTH4TH5 is the table of the Nokia 7220 IXR-H4 (TH4) and -H5 (TH5)
// SKUs: the H5 file adds the 800G rows, the other rows are the same.
var nokiaTH4 = rows(
	[5]float64{10000, 5, 1248, 2288, 35776}, [5]float64{25000, 5, 1248, 2288, 53248},
	[5]float64{40000, 5, 1248, 2288, 66560}, [5]float64{50000, 5, 1248, 2288, 90272},
	[5]float64{100000, 5, 1248, 2288, 165568}, [5]float64{400000, 5, 1248, 2288, 307848},
	[5]float64{10000, 40, 1248, 2288, 37024}, [5]float64{25000, 40, 1248, 2288, 53248},
	[5]float64{40000, 40, 1248, 2288, 71552}, [5]float64{50000, 40, 1248, 2288, 96096},
	[5]float64{100000, 40, 1248, 2288, 177632}, [5]float64{400000, 40, 1248, 2288, 330200},
	[5]float64{10000, 300, 1248, 2288, 46176}, [5]float64{25000, 300, 1248, 2288, 79040},
	[5]float64{40000, 300, 1248, 2288, 108160}, [5]float64{50000, 300, 1248, 2288, 141856},
	[5]float64{100000, 300, 1248, 2288, 268736}, [5]float64{400000, 300, 1248, 2288, 499618},
)

var nokiaTH5 = append(append([]LookupRow{}, nokiaTH4...), rows(
	[5]float64{800000, 5, 1248, 2288, 572516}, [5]float64{800000, 40, 1248, 2288, 614172},
	[5]float64{800000, 300, 1248, 2288, 929132},
)...)

var asics = []ASIC{
	{Name: "spectrum", Aliases: []string{"spc1", "spectrum-1", "spectrum1"}, Vendor: "mellanox", CellBytes: 96, CellSource: mellanoxASICTable},
	{Name: "spectrum-2", Aliases: []string{"spc2", "spectrum2"}, Vendor: "mellanox", CellBytes: 144, CellSource: mellanoxASICTable},
	{Name: "spectrum-3", Aliases: []string{"spc3", "spectrum3"}, Vendor: "mellanox", CellBytes: 144, CellSource: mellanoxASICTable},
	{Name: "spectrum-4", Aliases: []string{"spc4", "spectrum4"}, Vendor: "mellanox", CellBytes: 192, CellSource: mellanoxASICTable},
	{Name: "spectrum-5", Aliases: []string{"spc5", "spectrum5"}, Vendor: "mellanox", CellBytes: 192, CellSource: mellanoxASICTable},
	{Name: "tomahawk4", Aliases: []string{"th4"}, Vendor: "broadcom",
		CellSource: "no public figure",
		Table:      &LookupTable{Source: "sonic-buildimage device/nokia/x86_64-nokia_ixr7220_h4-r0/Nokia-IXR7220-H4-64D/pg_profile_lookup.ini", Rows: nokiaTH4}},
	{Name: "tomahawk5", Aliases: []string{"th5"}, Vendor: "broadcom",
		CellSource: "no public figure",
		Table:      &LookupTable{Source: "sonic-buildimage device/nokia/x86_64-nokia_ixr7220_h5_64d-r0/Nokia-IXR7220-H5-64D/pg_profile_lookup.ini", Rows: nokiaTH5}},
	{Name: "tomahawk6", Aliases: []string{"th6"}, Vendor: "broadcom", CellBytes: 420,
		CellSource: "sonic-buildimage device/nokia/x86_64-nokia_ixr7220_h6_128-r0/Nokia-IXR7220-H6-P128/pg_profile_lookup.ini (\"TH6: cell size = 420 bytes\")",
		Table: &LookupTable{Source: "sonic-buildimage device/nokia/x86_64-nokia_ixr7220_h6_128-r0/Nokia-IXR7220-H6-P128/pg_profile_lookup.ini", Rows: rows(
			[5]float64{10000, 5, 8400, 0, 54180}, [5]float64{25000, 5, 8400, 0, 80220}, [5]float64{40000, 5, 8400, 0, 100380},
			[5]float64{50000, 5, 8400, 0, 135660}, [5]float64{100000, 5, 8400, 0, 125580}, [5]float64{200000, 5, 8400, 0, 261660},
			[5]float64{400000, 5, 8400, 0, 464520}, [5]float64{800000, 5, 8400, 0, 797580},
			[5]float64{10000, 30, 8400, 0, 55860}, [5]float64{25000, 30, 8400, 0, 80220}, [5]float64{40000, 30, 8400, 0, 105840},
			[5]float64{50000, 30, 8400, 0, 141960}, [5]float64{100000, 30, 8400, 0, 130200}, [5]float64{200000, 30, 8400, 0, 270900},
			[5]float64{400000, 30, 8400, 0, 483420}, [5]float64{800000, 30, 8400, 0, 835380},
			[5]float64{10000, 40, 8400, 0, 56280}, [5]float64{25000, 40, 8400, 0, 80220}, [5]float64{40000, 40, 8400, 0, 107940},
			[5]float64{50000, 40, 8400, 0, 144480}, [5]float64{100000, 40, 8400, 0, 131880}, [5]float64{200000, 40, 8400, 0, 274260},
			[5]float64{400000, 40, 8400, 0, 490980}, [5]float64{800000, 40, 8400, 0, 850080},
			[5]float64{10000, 300, 8400, 0, 69300}, [5]float64{25000, 300, 8400, 0, 119280}, [5]float64{40000, 300, 8400, 0, 162540},
			[5]float64{50000, 300, 8400, 0, 212940}, [5]float64{100000, 300, 8400, 0, 180180}, [5]float64{200000, 300, 8400, 0, 371700},
			[5]float64{400000, 300, 8400, 0, 686280}, [5]float64{800000, 300, 8400, 0, 1239840},
			[5]float64{10000, 500, 8400, 0, 79380}, [5]float64{25000, 500, 8400, 0, 149520}, [5]float64{40000, 500, 8400, 0, 204540},
			[5]float64{50000, 500, 8400, 0, 265860}, [5]float64{100000, 500, 8400, 0, 217560}, [5]float64{200000, 500, 8400, 0, 446880},
			[5]float64{400000, 500, 8400, 0, 836640}, [5]float64{800000, 500, 8400, 0, 1539720},
		)}},
	{Name: "trident4", Aliases: []string{"td4"}, Vendor: "broadcom",
		CellSource: "no public figure",
		Table: &LookupTable{Source: "sonic-buildimage device/nokia/x86_64-nokia_ixr7220_d4-r0/Nokia-IXR7220-D4-36D/pg_profile_lookup.ini", Rows: rows(
			[5]float64{10000, 5, 1272, 2544, 30210}, [5]float64{25000, 5, 1272, 2544, 31482}, [5]float64{40000, 5, 1272, 2544, 46428},
			[5]float64{100000, 5, 1272, 2544, 75366}, [5]float64{400000, 5, 1272, 2544, 154548},
			[5]float64{10000, 40, 1272, 2544, 30846}, [5]float64{25000, 40, 1272, 2544, 32754}, [5]float64{40000, 40, 1272, 2544, 48336},
			[5]float64{100000, 40, 1272, 2544, 81726}, [5]float64{400000, 40, 1272, 2544, 180624},
			[5]float64{10000, 100, 1272, 2544, 31800}, [5]float64{25000, 100, 1272, 2544, 34980}, [5]float64{40000, 100, 1272, 2544, 51834},
			[5]float64{100000, 100, 1272, 2544, 89040}, [5]float64{400000, 100, 1272, 2544, 209562},
			[5]float64{10000, 300, 1272, 2544, 34662}, [5]float64{25000, 300, 1272, 2544, 41976}, [5]float64{40000, 300, 1272, 2544, 63282},
			[5]float64{100000, 300, 1272, 2544, 117978}, [5]float64{400000, 300, 1272, 2544, 325632},
		)}},
}

// ASICs lists the ASIC families fabricctl has buffer facts for.
func ASICs() []ASIC { return asics }

// ASICNames lists the accepted names (without aliases), sorted.
func ASICNames() []string {
	out := make([]string, len(asics))
	for i, a := range asics {
		out[i] = a.Name
	}
	sort.Strings(out)
	return out
}

// LookupASIC finds an ASIC by name or alias (case does not matter).
func LookupASIC(name string) (ASIC, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" {
		return ASIC{}, false
	}
	for _, a := range asics {
		if a.Name == n {
			return a, true
		}
		for _, al := range a.Aliases {
			if al == n {
				return a, true
			}
		}
	}
	return ASIC{}, false
}

// vendorRow finds the row for in: the row of the same speed with the
// shortest cable at least as long as in's (the conservative choice between
// rows); beyond the longest row, the last two rows extrapolated linearly.
func vendorRow(t *LookupTable, in HeadroomInput) (row LookupRow, extrapolated, ok bool) {
	var same []LookupRow
	for _, r := range t.Rows {
		if r.Speed == in.Speed {
			same = append(same, r)
		}
	}
	if len(same) == 0 {
		return LookupRow{}, false, false
	}
	sort.Slice(same, func(i, j int) bool { return same[i].CableMeters < same[j].CableMeters })
	for _, r := range same {
		if r.CableMeters >= in.CableMeters {
			return r, false, true
		}
	}
	last := same[len(same)-1]
	if len(same) == 1 {
		return last, true, true
	}
	prev := same[len(same)-2]
	slope := float64(last.Xoff-prev.Xoff) / (last.CableMeters - prev.CableMeters)
	last.Xoff += int64(math.Ceil(slope * (in.CableMeters - last.CableMeters)))
	last.CableMeters = in.CableMeters
	return last, true, true
}

// HeadroomVendor is the vendor's validated xoff for in.ASIC at in's speed
// and cable length; ok is false when the ASIC has no table or the table no
// row of that speed.
func HeadroomVendor(in HeadroomInput) (HeadroomResult, bool) {
	a, ok := LookupASIC(in.ASIC)
	if !ok || a.Table == nil {
		return HeadroomResult{}, false
	}
	r, extra, ok := vendorRow(a.Table, in)
	if !ok {
		return HeadroomResult{}, false
	}
	name := fmt.Sprintf("%s xoff %s/%gm", a.Name, FormatRate(r.Speed), r.CableMeters)
	if extra {
		name += " (extrapolated)"
	}
	return HeadroomResult{Model: ModelVendor, Bytes: r.Xoff, Terms: []HeadroomTerm{{name, float64(r.Xoff)}}}, true
}

// vendorAssumptions are the caveats of the vendor model for in.
func vendorAssumptions(in HeadroomInput) []string {
	if in.ASIC == "" {
		return nil
	}
	a, ok := LookupASIC(in.ASIC)
	switch {
	case !ok:
		return []string{fmt.Sprintf("ASIC %q unknown: no vendor table (known: %s)", in.ASIC, strings.Join(ASICNames(), ", "))}
	case a.Table == nil:
		return []string{fmt.Sprintf("%s: the vendor publishes no lossless PG lookup table; cell %d B (%s) gives the SONiC model's cell factor %g", a.Name, a.CellBytes, a.CellSource, a.CellFactor())}
	}
	r, extra, ok := vendorRow(a.Table, in)
	switch {
	case !ok:
		return []string{fmt.Sprintf("%s table (%s) has no %s row: the vendor model is left out", a.Name, a.Table.Source, FormatRate(in.Speed))}
	case extra:
		return []string{fmt.Sprintf("%s table (%s) ends before %gm: the vendor figure is extrapolated from its two longest rows", a.Name, a.Table.Source, in.CableMeters)}
	}
	return []string{fmt.Sprintf("%s vendor figure: the %s/%gm row of %s", a.Name, FormatRate(r.Speed), r.CableMeters, a.Table.Source)}
}

// SwitchASIC is the ASIC of sw: the one the intent names, else its
// release profile's (internal/profile), "" when neither says.
func SwitchASIC(sw *Switch) string {
	if sw.ASIC != "" {
		return sw.ASIC
	}
	if p, err := profile.LookupFor(string(sw.Platform), sw.Profile); err == nil {
		return p.ASIC
	}
	return ""
}

// VendorRow is the row of in.ASIC's lookup table the vendor model uses,
// with the table's source; ok is false without one.
func VendorRow(in HeadroomInput) (row LookupRow, source string, ok bool) {
	a, found := LookupASIC(in.ASIC)
	if !found || a.Table == nil {
		return LookupRow{}, "", false
	}
	r, _, ok := vendorRow(a.Table, in)
	return r, a.Table.Source, ok
}
