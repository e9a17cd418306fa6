package intent

import "time"

// Presets a policy can start from. Every field of a preset can be overridden
// in the intent; a class with the same name overrides the preset's class field
// by field.
const (
	PresetRoCELossless = "roce-lossless"
	PresetNone         = "none"
)

// Policy defaults that apply with or without a preset.
const (
	DefaultMTU                   = 9216
	DefaultHostMTU               = 9000
	DefaultRoCEPathMTU           = 4096
	DefaultMaxLosslessPriorities = 2
	DefaultCableMeters           = 100 // NVIDIA's `nv set qos roce` assumes 100 m
	DefaultRoCEMode              = "RoCE v2"
)

// DefaultWatchdog is the PFC watchdog fabricctl configures unless told otherwise:
// poll < detect <= restore, within every platform's range.
var DefaultWatchdog = Watchdog{
	Enabled: true,
	Detect:  200 * time.Millisecond,
	Restore: 400 * time.Millisecond,
	Poll:    100 * time.Millisecond,
	Action:  WatchdogDrop,
}

// presetClasses returns the classes of a preset, or nil for none.
//
// roce-lossless matches NVIDIA's `nv set qos roce` lossless mode: DSCP 26 ->
// priority 3 lossless (PFC) with ECN 150,000 B / 1,501,500 B at 100 %; DSCP 48
// -> priority 6 strict for CNPs; everything else -> priority 0; ETS TC3 50 %,
// TC0 50 %.
//
// roce-lossy is the same classes; the mode (lossy by default with it)
// takes PFC off them.
func presetClasses(name string) []Class {
	if name != PresetRoCELossless && name != PresetRoCELossy {
		return nil
	}
	return []Class{
		{Name: "default", Priority: 0, Weight: 50, Default: true},
		{Name: "roce", DSCP: []int{26}, Priority: 3, Lossless: true, Weight: 50,
			ECN: &ECN{MinBytes: 150_000, MaxBytes: 1_501_500, Probability: 100}},
		{Name: "cnp", DSCP: []int{48}, Priority: 6, Strict: true, CNP: true},
	}
}

// Presets lists the preset names.
func Presets() []string { return []string{PresetRoCELossless, PresetRoCELossy, PresetNone} }
