package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
	"github.com/fabricctl/fabricctl/intent/portfacts"
)

// explain prints the derived facts of --port of the intent in -f: where
// each of the port's figures comes from, as every command reads it.
func (o *headroomOptions) explain(d *deps, stdin io.Reader, out io.Writer) error {
	if err := checkOutput(o.output, "text", "json"); err != nil {
		return err
	}
	if len(o.files) == 0 || o.port == "" {
		return usagef("-f INTENT and --port NODE:PORT go together")
	}
	var set []string
	for _, f := range []string{"speed", "cable", "mtu", "asic"} {
		if o.given != nil && o.given(f) {
			set = append(set, "--"+f)
		}
	}
	if len(set) > 0 {
		return usagef("--port takes the port's speed, cable, MTU and ASIC from the intent: no %s", strings.Join(set, ", "))
	}
	node, port, ok := strings.Cut(o.port, ":")
	if !ok || node == "" || port == "" {
		return usagef("--port %q: want SWITCH:PORT or HOST:INTERFACE", o.port)
	}
	f, err := d.loadIntent(stdin, o.files...)
	if err != nil {
		return withCode(ExitError, fmt.Errorf("load intent (run fabricctl check for details): %w", err))
	}
	if sw := f.Switch(node); sw != nil {
		p := sw.Port(port)
		if p == nil {
			return usagef("--port %s: switch %s has no port %q", o.port, node, port)
		}
		return o.explainPort(out, portfacts.PortOf(f, sw, *p))
	}
	if h := f.Host(node); h != nil {
		for _, nic := range h.NICs {
			if nic.Interface == port {
				return o.explainNIC(out, portfacts.NICOf(f, h, nic))
			}
		}
		return usagef("--port %s: host %s has no NIC %q", o.port, node, port)
	}
	return usagef("--port %s: no switch or host %q in the intent", o.port, node)
}

func (o *headroomOptions) explainPort(out io.Writer, p portfacts.Port) error {
	s := p.Switch
	if o.output == "json" {
		type lossless struct {
			Class      string         `json:"class"`
			Priority   int            `json:"priority"`
			XOFF       int64          `json:"xoffBytes"`
			XOFFSource string         `json:"xoffSource"`
			ECN        *portfacts.ECN `json:"ecn,omitempty"`
		}
		v := struct {
			Switch      string                  `json:"switch"`
			Port        string                  `json:"port"`
			Platform    intent.Platform         `json:"platform"`
			Profile     string                  `json:"profile,omitempty"`
			ASIC        string                  `json:"asic,omitempty"`
			CellBytes   int64                   `json:"cellBytes"`
			CellFactor  float64                 `json:"cellFactor"`
			CFSource    string                  `json:"cellFactorSource"`
			Speed       int64                   `json:"speedBitsPerSecond"`
			Cable       float64                 `json:"cableMeters"`
			IPMTU       int                     `json:"ipMTU"`
			PlatformMTU int                     `json:"platformMTU"`
			MTUMeaning  string                  `json:"platformMTUMeaning,omitempty"`
			Models      []intent.HeadroomResult `json:"models"`
			Required    int64                   `json:"requiredBytes"`
			Programmed  int64                   `json:"programmedBytes"`
			Occupied    int64                   `json:"occupiedBytes"`
			Lossless    []lossless              `json:"lossless"`
		}{Switch: s.Name, Port: p.Name, Platform: s.Platform, ASIC: s.ASIC, CellBytes: s.CellBytes, CellFactor: s.CellFactor, CFSource: s.CellFactorSource,
			Speed: p.Speed, Cable: p.Cable, IPMTU: p.IPMTU, PlatformMTU: p.PlatformMTU, MTUMeaning: s.MTUMeaning,
			Models: p.Headroom.Models, Required: p.Headroom.Required, Programmed: p.Headroom.Programmed, Occupied: p.Headroom.Occupied, Lossless: []lossless{}}
		if s.Profile != nil {
			v.Profile = s.Profile.Name
		}
		for _, l := range p.Lossless {
			v.Lossless = append(v.Lossless, lossless{Class: l.Class.Name, Priority: l.Priority, XOFF: l.XOFF, XOFFSource: l.XOFFSource, ECN: l.ECN})
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	var b strings.Builder
	prof := "no profile"
	if s.Profile != nil {
		prof = "profile " + s.Profile.Name
	}
	fmt.Fprintf(&b, "switch %s port %s (%s, %s)\n", s.Name, p.Name, s.Platform, prof)
	fmt.Fprintf(&b, "  speed %s, cable %g m, IP MTU %d (the platform's mtu leaf: %d, %s)\n", intent.FormatRate(p.Speed), p.Cable, p.IPMTU, p.PlatformMTU, mtuMeaning(s.MTUMeaning))
	asic := s.ASIC
	if asic == "" {
		asic = "unknown"
	}
	fmt.Fprintf(&b, "  ASIC %s, buffer cell %d B, SONiC model cell factor %g (%s)\n\n", asic, s.CellBytes, s.CellFactor, s.CellFactorSource)
	if err := check.Headroom(p.Headroom.Input).WriteText(&b); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\nprogrammed per lossless priority: %s B (plan writes it: SONiC BUFFER_PROFILE xoff, SR Linux pfc-queue reserved bytes; EOS and OpenConfig take none)\n", groupDigits(p.Headroom.Programmed))
	fmt.Fprintf(&b, "takes of the buffer: %s B (whole %d B cells; check FC112 counts this)\n", groupDigits(p.Headroom.Occupied), s.CellBytes)
	for _, l := range p.Lossless {
		x := "unknown (no buffer in the intent)"
		if l.XOFF >= 0 {
			x = fmt.Sprintf("%s B (%s)", groupDigits(l.XOFF), l.XOFFSource)
		}
		fmt.Fprintf(&b, "class %s (priority %d): XOFF point %s", l.Class.Name, l.Priority, x)
		if l.ECN != nil {
			fmt.Fprintf(&b, "; ECN %s..%s B (%s..%s cells), %d %%", groupDigits(l.ECN.MinBytes), groupDigits(l.ECN.MaxBytes), groupDigits(l.ECN.MinCells), groupDigits(l.ECN.MaxCells), l.ECN.Probability)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// groupDigits writes n with thousands separators, as check prints bytes.
func groupDigits(n int64) string {
	neg := n < 0
	if neg {
		n = -n
	}
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

func mtuMeaning(m string) string {
	switch m {
	case "":
		return "IP MTU"
	case "ip":
		return "the IP MTU"
	}
	return "the L2 frame without FCS"
}

func (o *headroomOptions) explainNIC(out io.Writer, n portfacts.NIC) error {
	if o.output == "json" {
		v := struct {
			Host          string  `json:"host"`
			Interface     string  `json:"interface"`
			Speed         int64   `json:"speedBitsPerSecond"`
			SpeedSource   string  `json:"speedSource"`
			Cable         float64 `json:"cableMeters"`
			CableSource   string  `json:"cableSource"`
			MTU           int     `json:"mtu"`
			DriverCable   int     `json:"driverCableMeters"`
			DriverSource  string  `json:"driverCableSource"`
			Headroom      int64   `json:"headroomBytes"`
			Needed        int64   `json:"neededBytes"`
			BufferMinimum int64   `json:"bufferMinimumBytes"`
		}{n.Host, n.Interface, n.Speed, n.SpeedSource, n.Cable, n.CableSource, n.MTU, n.DriverCable, n.DriverCableSource, n.Headroom, n.Needed, n.BufferMinimum}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "host %s NIC %s (a ConnectX NIC as mlx5 computes it: drivers/net/ethernet/mellanox/mlx5/core/en/port_buffer.c)\n", n.Host, n.Interface)
	speed := "unknown (mlx5 computes with 40G)"
	if n.Speed > 0 {
		speed = intent.FormatRate(n.Speed)
	}
	fmt.Fprintf(&b, "  speed %s (%s), link cable %g m (%s), MTU %d (policy.hostMTU)\n", speed, n.SpeedSource, n.Cable, n.CableSource, n.MTU)
	fmt.Fprintf(&b, "  cable the driver is given: %d m (%s)\n", n.DriverCable, n.DriverCableSource)
	fmt.Fprintf(&b, "headroom (calculate_xoff: (301 + 2.16 x %d m) x speed + 2.72 x MTU): %s B per lossless buffer\n", n.DriverCable, groupDigits(n.Headroom))
	fmt.Fprintf(&b, "the link needs by the same formula at %g m: %s B", n.Cable, groupDigits(n.Needed))
	if n.Headroom < n.Needed {
		b.WriteString(" (more than the NIC reserves: check FC141)")
	}
	fmt.Fprintf(&b, "\nsmallest lossless receive buffer the driver takes: %s B (xoff + max_mtu %d as a fresh ConnectX reports it + cell %d; policy.hostBuffers below it is refused by host plan)\n", groupDigits(n.BufferMinimum), portfacts.MLX5FreshMaxMTU, portfacts.MLX5CellFallback)
	_, err := io.WriteString(out, b.String())
	return err
}
