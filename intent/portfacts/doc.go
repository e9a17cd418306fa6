// Package portfacts is where every number fabricctl derives for a switch
// port or a host NIC comes from: speed, cable, IP MTU and the platform's
// own MTU meaning, ASIC, buffer cell and cell factor, PFC headroom by each
// model and the one programmed, the XOFF point, ECN thresholds as
// programmed, the watchdog timers as the platform takes them, and a
// ConnectX NIC's headroom and buffer minimum as its driver computes them.
//
// It is computed from the resolved intent (and intent.Fabric.Derive, what
// the command line changes, such as --cell-factor) and nothing else:
// check, render, plan, apply, diff, lab, simulate, host plan and validate
// read these facts rather than computing or defaulting their own, so one
// port has one headroom, one XOFF point and one set of thresholds whatever
// command prints it. "Where does this XOFF number come from" is answered
// here: Port.XOFF, with Port.Headroom's models and rounding beside it.
//
// The formulas are intent's (headroom.go, headroom_asic.go: the IEEE
// 802.1Qbb, SONiC and mlx5 models and the vendors' tables) and the
// platform data internal/profile's; this package combines them per port
// and applies the roundings the platforms apply. It does no I/O.
package portfacts
