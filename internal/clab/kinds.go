package clab

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/fabricctl/fabricctl/intent"
)

// Role is what a node is to fabricctl.
type Role int

const (
	// RoleOther is a node fabricctl neither configures nor tests (bridges,
	// ovs bridges, external containers).
	RoleOther Role = iota
	// RoleSwitch is a switch fabricctl configures over gNMI.
	RoleSwitch
	// RoleHost is a Linux host with RoCE NICs.
	RoleHost
)

// KindInfo is how fabricctl treats one containerlab kind.
type KindInfo struct {
	Role     Role
	Platform intent.Platform // for RoleSwitch
	// GNMIPort is the port the NOS serves gNMI on by default in a lab.
	GNMIPort int
	// Interface maps a containerlab interface name to the NOS port name.
	Interface func(string) (string, error)
}

// kinds maps containerlab kind names (current and legacy spellings) to what
// fabricctl does with them. Sources: containerlab nodes/*/ Register kind
// names and InterfaceRegexp, docs/manual/kinds/{srl,sonic-vs,sonic-vm,ceos}.md.
var kinds = map[string]KindInfo{
	// SR Linux: e1-1 in the topology is ethernet-1/1 in the NOS (e1-2-3 is
	// the breakout ethernet-1/2/3); containerlab also accepts the NOS names
	// as aliases. gNMI: 57400, TLS with the lab CA (containerlab config).
	"nokia_srlinux": {Role: RoleSwitch, Platform: intent.PlatformSRLinux, GNMIPort: 57400, Interface: srlInterface},
	"srl":           {Role: RoleSwitch, Platform: intent.PlatformSRLinux, GNMIPort: 57400, Interface: srlInterface},
	// SONiC: ethN (N >= 1) is the wire behind Ethernet(4*(N-1)): eth1 ->
	// Ethernet0, eth2 -> Ethernet4. gNMI (sonic-gnmi) listens on 8080.
	"sonic-vs": {Role: RoleSwitch, Platform: intent.PlatformSONiC, GNMIPort: 8080, Interface: sonicInterface},
	"sonic-vm": {Role: RoleSwitch, Platform: intent.PlatformSONiC, GNMIPort: 8080, Interface: sonicInterface},
	// cEOS: ethN is EthernetN; gNMI on 6030 (management api gnmi).
	"arista_ceos":   {Role: RoleSwitch, Platform: intent.PlatformEOS, GNMIPort: 6030, Interface: ceosInterface},
	"ceos":          {Role: RoleSwitch, Platform: intent.PlatformEOS, GNMIPort: 6030, Interface: ceosInterface},
	"linux":         {Role: RoleHost, Interface: func(s string) (string, error) { return s, nil }},
	"bridge":        {Role: RoleOther},
	"ovs-bridge":    {Role: RoleOther},
	"ext-container": {Role: RoleOther},
}

// Kind describes a containerlab kind; false if fabricctl does not know it.
func Kind(kind string) (KindInfo, bool) {
	k, ok := kinds[kind]
	return k, ok
}

// Kinds lists the kinds fabricctl knows, sorted.
func Kinds() []string {
	out := make([]string, 0, len(kinds))
	for k := range kinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var (
	srlShort = regexp.MustCompile(`^e(\d+)-(\d+)(?:-(\d+))?$`)
	srlLong  = regexp.MustCompile(`^ethernet-(\d+)/(\d+)(?:/(\d+))?$`)
	ethN     = regexp.MustCompile(`^eth(\d+)$`)
	sonicEth = regexp.MustCompile(`^Ethernet(\d+)$`)
	ceosEth  = regexp.MustCompile(`^Ethernet(\d+)(/\d+)*$`)
)

func srlInterface(s string) (string, error) {
	if srlLong.MatchString(s) {
		return s, nil
	}
	m := srlShort.FindStringSubmatch(s)
	if m == nil {
		return "", fmt.Errorf("%q is not an SR Linux data interface (want eL-P, eL-P-C or ethernet-L/P)", s)
	}
	name := "ethernet-" + m[1] + "/" + m[2]
	if m[3] != "" {
		name += "/" + m[3]
	}
	return name, nil
}

func sonicInterface(s string) (string, error) {
	if sonicEth.MatchString(s) {
		return s, nil
	}
	m := ethN.FindStringSubmatch(s)
	if m == nil {
		return "", fmt.Errorf("%q is not a SONiC data interface (want ethN, N >= 1)", s)
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n < 1 {
		return "", fmt.Errorf("%q: eth0 is the management interface; data interfaces start at eth1", s)
	}
	return "Ethernet" + strconv.Itoa(4*(n-1)), nil
}

func ceosInterface(s string) (string, error) {
	if ceosEth.MatchString(s) {
		return s, nil
	}
	m := ethN.FindStringSubmatch(s)
	if m == nil || m[1] == "0" {
		return "", fmt.Errorf("%q is not a cEOS data interface (want ethN, N >= 1, or EthernetN)", s)
	}
	return "Ethernet" + strings.TrimLeft(m[1], "0"), nil
}
