package main

import (
	"github.com/spf13/pflag"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
	"github.com/fabricctl/fabricctl/internal/sim"
)

// The port speed and cable length flags of every command (headroom,
// inventory import, simulate, tune) are read here, by parseSpeedFlag and
// parseCableFlag, so that each command takes and refuses the same values
// with the same words. A value is read as the intent reads a switch port's
// speed: and cable: (intent.ParseRate, intent.ParseLength: the unit grammar
// the YAML and its JSON Schema share), and a value the grammar refuses is
// refused in the intent's own words. Beyond the grammar a flag is held to
// what check holds a port to: a speed below 1G is FC127's unit typo, in
// FC127's words. Zero, which the grammar spells (speed: 0, cable: 0m), is
// refused: every command reads a zero speed or cable as "not given" (the
// synthetic star's default), so a flag cannot mean it; in the intent check
// refuses it in the same words (FC133).

// parseSpeedFlag reads v, the value of the port speed flag --name, in bits/s.
func parseSpeedFlag(name, v string) (int64, error) {
	r, err := intent.ParseRate(v)
	if err != nil {
		return 0, usagef("--%s: %v", name, err)
	}
	if r <= 0 {
		return 0, usagef("--%s %s: no line rate; want one such as 100G or 400G", name, v)
	}
	if err := check.LineRateTypo(r); err != nil {
		return 0, usagef("--%s %s: %v", name, v, err)
	}
	return r, nil
}

// parseCableFlag reads v, the value of the cable length flag --name, in metres.
func parseCableFlag(name, v string) (float64, error) {
	l, err := intent.ParseLength(v)
	if err != nil {
		return 0, usagef("--%s: %v", name, err)
	}
	if l <= 0 {
		return 0, usagef("--%s %s: no length; want one such as 3m or 100m", name, v)
	}
	return l, nil
}

// parseSizeFlag reads v, the value of the byte size flag --name (simulate's
// --size, --headroom and --xoff; tune's --size), as the intent reads a size
// (intent.ParseSize), refused in the intent's words; zero is refused as no
// size, as a zero speed or cable is (the commands read it as not given).
func parseSizeFlag(name, v string) (int64, error) {
	b, err := intent.ParseSize(v)
	if err != nil {
		return 0, usagef("--%s: %v", name, err)
	}
	if b <= 0 {
		return 0, usagef("--%s %s: no size; want one such as 512KB", name, v)
	}
	return b, nil
}

// workloadFlags are the workload flags simulate and tune share: the
// synthetic star's --speed and --cable (the star stands in when the
// intent has too few linked hosts) and --size of each generated flow.
// They are bound and parsed here for both, so that the two commands take
// and refuse the same values with the same words.
type workloadFlags struct {
	speed, cable, size string
}

// bind adds the flags to fl; sizeHelp says what --size means to the
// command (and its default there).
func (w *workloadFlags) bind(fl *pflag.FlagSet, sizeHelp string) {
	fl.StringVar(&w.speed, "speed", "", "synthetic star: port speed (default the intent's first switch port, else 100G)")
	fl.StringVar(&w.cable, "cable", "", "synthetic star: cable length (default the intent's first switch port, else 3m)")
	fl.StringVar(&w.size, "size", "", sizeHelp)
}

// parse reads the flags: the star's options (zero where not given: the
// intent's or sim's defaults) and the size of a generated flow (0 = not
// given), each read by parseSpeedFlag, parseCableFlag or parseSizeFlag.
func (w *workloadFlags) parse() (sim.StarOptions, int64, error) {
	var so sim.StarOptions
	var size int64
	var err error
	if w.speed != "" {
		if so.Speed, err = parseSpeedFlag("speed", w.speed); err != nil {
			return so, 0, err
		}
	}
	if w.cable != "" {
		if so.Cable, err = parseCableFlag("cable", w.cable); err != nil {
			return so, 0, err
		}
	}
	if w.size != "" {
		if size, err = parseSizeFlag("size", w.size); err != nil {
			return so, 0, err
		}
	}
	return so, size, nil
}
