package main

import (
	"github.com/spf13/pflag"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/sim"
)

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
// given). A value that is not a positive rate, length or size is a usage
// error naming the flag and an example.
func (w *workloadFlags) parse() (sim.StarOptions, int64, error) {
	var so sim.StarOptions
	var size int64
	var err error
	if w.speed != "" {
		if so.Speed, err = intent.ParseRate(w.speed); err != nil || so.Speed <= 0 {
			return so, 0, usagef("--speed %q: want a line rate such as 100G", w.speed)
		}
	}
	if w.cable != "" {
		if so.Cable, err = intent.ParseLength(w.cable); err != nil || so.Cable <= 0 {
			return so, 0, usagef("--cable %q: want a length such as 3m", w.cable)
		}
	}
	if w.size != "" {
		if size, err = intent.ParseSize(w.size); err != nil || size <= 0 {
			return so, 0, usagef("--size %q: want a size such as 512KB", w.size)
		}
	}
	return so, size, nil
}
