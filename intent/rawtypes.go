package intent

import (
	"fmt"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// The raw* types mirror the YAML exactly. Pointer fields distinguish "not
// set" from zero so presets and defaults can be overridden field by field.
// They are the single source of the JSON Schema (schema.go).

type rawFile struct {
	APIVersion string         `yaml:"apiVersion" required:"true" enum:"fabricctl.io/v1alpha1" doc:"intent format version; must be fabricctl.io/v1alpha1"`
	Kind       string         `yaml:"kind" required:"true" enum:"Fabric" doc:"must be Fabric"`
	Metadata   *rawMetadata   `yaml:"metadata" doc:"name of the fabric"`
	Policy     *rawPolicy     `yaml:"policy" doc:"fabric-wide RoCE QoS policy (at most one file may define it)"`
	Inventory  *rawInventory  `yaml:"inventory" doc:"switches, hosts and links (may be split across files)"`
	Validation *rawValidation `yaml:"validation" doc:"thresholds for fabricctl validate"`
	Pos        Pos
}

type rawMetadata struct {
	Name string `yaml:"name" doc:"fabric name, used in plans and reports"`
	Keys Fields
	Pos  Pos
}

type rawPolicy struct {
	Preset                *string      `yaml:"preset" enum:"roce-lossless,roce-lossy,none" doc:"start from a preset: roce-lossless (NVIDIA 'nv set qos roce' lossless defaults), roce-lossy (the same classes in lossy mode, 'nv set qos roce mode lossy') or none"`
	Mode                  *string      `yaml:"mode" enum:"lossless,lossy,semi-lossless,pfc-only" doc:"RoCE mode: lossless (PFC and ECN; default), lossy (ECN only, no PFC; NICs retransmit), semi-lossless (hosts send pause, switches honour it and never send it) or pfc-only (PFC without ECN marking or DCQCN); the preset's classes follow it, a class's own lossless/ecn may not contradict it"`
	MTU                   *int         `yaml:"mtu" range:"1280,16383" doc:"switch port MTU in bytes, as an IP MTU like hostMTU (SR Linux and OpenConfig ports get +14 for the Ethernet header) (default 9216)"`
	HostMTU               *int         `yaml:"hostMTU" range:"1280,16383" doc:"host netdev MTU in bytes (default 9000)"`
	RoCEPathMTU           *int         `yaml:"rocePathMTU" enum:"256,512,1024,2048,4096" doc:"RDMA path MTU: 256, 512, 1024, 2048 or 4096 (default 4096)"`
	DCBX                  *string      `yaml:"dcbx" enum:"host-static,switch-willing" doc:"who owns host DCB settings: host-static (default) or switch-willing"`
	GlobalPause           *bool        `yaml:"globalPause" doc:"802.3x link pause; must stay false where PFC is on (default false)"`
	MaxLosslessPriorities *int         `yaml:"maxLosslessPriorities" range:"1,8" doc:"lossless priorities allowed per port (default 2; platforms may lower it)"`
	TrustDSCPFullMap      *bool        `yaml:"trustDSCPFullMap" doc:"hosts get all 64 DSCP->priority APP entries (mlnx_qos --trust dscp style) instead of only the class DSCPs"`
	HostBuffers           []rawBuffer  `yaml:"hostBuffers" doc:"host NIC receive buffers (dcb buffer): each buffer's size and the priorities it takes; unlisted priorities use buffer 0; absent = leave the NIC's buffers alone"`
	Watchdog              *rawWatchdog `yaml:"watchdog" doc:"PFC watchdog (storm/deadlock detection)"`
	RoCE                  *rawRoCE     `yaml:"roce" doc:"what hosts send RoCE and CNP traffic with"`
	DCQCN                 *rawDCQCN    `yaml:"dcqcn" doc:"host DCQCN reaction/notification-point parameters written to the NICs (mlx5 cc_params, MLNX_OFED ecn/roce_rp|roce_np, bnxt_re configfs cc); absent = leave the NICs' values alone, and so each unset field"`
	NICAccelerations      *rawNICAccel `yaml:"nicAccelerations" doc:"ConnectX lossy-RoCE accelerations (ROCE_ACCL register); absent = leave the NICs' values alone"`
	// HostPauseStormPrevention: units and range in PauseStormPrevention.
	HostPauseStormPrevention *PauseStormPrevention `yaml:"hostPauseStormPrevention" doc:"host NIC pause storm prevention: a NIC stuck sending pause stops after this stall time (mlx5 ethtool tunable pfc-prevention-tout): off, auto (mlx5: 100ms) or whole ms within 80ms-8s; absent = leave the NICs' values alone"`
	Classes                  []rawClass            `yaml:"classes" doc:"traffic classes; with a preset, a class of the same name overrides the preset's field by field"`
	Keys                     Fields
	Pos                      Pos
}

type rawClass struct {
	Name     string   `yaml:"name" required:"true" doc:"class name (roce, cnp, default, ...)"`
	DSCP     []int    `yaml:"dscp" range:"0,63" doc:"DSCP values of the class"`
	Priority *int     `yaml:"priority" range:"0,7" doc:"802.1p priority, also the switch traffic class/queue and host TC"`
	Lossless *bool    `yaml:"lossless" doc:"enable PFC on this priority"`
	Strict   *bool    `yaml:"strict" doc:"strict-priority scheduling (CNP class)"`
	Weight   *Percent `yaml:"weight" doc:"ETS/DWRR weight in percent of the non-strict classes"`
	ECN      *rawECN  `yaml:"ecn" doc:"WRED-ECN marking on the class queue"`
	CNP      *bool    `yaml:"cnp" doc:"this class carries congestion notification packets"`
	Default  *bool    `yaml:"default" doc:"catch-all class for every DSCP not listed elsewhere"`
	Keys     Fields
	Pos      Pos
}

type rawBuffer struct {
	Buffer     *int  `yaml:"buffer" required:"true" range:"0,7" doc:"buffer index 0-7"`
	Size       *Size `yaml:"size" doc:"buffer size (e.g. 256KB); absent = leave the size to the driver"`
	Priorities []int `yaml:"priorities" range:"0,7" doc:"priorities received into this buffer"`
	Keys       Fields
	Pos        Pos
}

type rawECN struct {
	Enabled     *bool    `yaml:"enabled" doc:"false turns ECN marking off (default true when the block is present)"`
	Min         *Size    `yaml:"min" doc:"Kmin: queue depth where marking starts (e.g. 150KB)"`
	Max         *Size    `yaml:"max" doc:"Kmax: queue depth where marking reaches probability (e.g. 1.5MB)"`
	Probability *Percent `yaml:"probability" doc:"marking probability at Kmax (default 100%)"`
	Keys        Fields
	Pos         Pos
}

type rawWatchdog struct {
	Enabled *bool     `yaml:"enabled" doc:"turn the PFC watchdog on (default true)"`
	Detect  *Duration `yaml:"detect" doc:"how long a queue must be paused before it is declared stuck (default 200ms)"`
	Restore *Duration `yaml:"restore" doc:"how long the recovery action lasts (default 400ms)"`
	Poll    *Duration `yaml:"poll" doc:"how often the watchdog polls (default 100ms)"`
	Action  *string   `yaml:"action" enum:"drop,forward,alert" doc:"drop (default), forward or alert"`
	Keys    Fields
	Pos     Pos
}

type rawRoCE struct {
	ToS         *int    `yaml:"tos" range:"0,255" doc:"IP ToS byte of RDMA traffic: DSCP<<2 | ECT(0) (default from the lossless class, e.g. 106)"`
	CNPDSCP     *int    `yaml:"cnpDSCP" range:"0,63" doc:"DSCP the NIC sends CNPs with (default: the CNP class's DSCP)"`
	CNPPriority *int    `yaml:"cnpPriority" range:"0,7" doc:"802.1p priority of CNPs (default: the CNP class's priority)"`
	Mode        *string `yaml:"mode" enum:"RoCE v2,IB/RoCE v1" doc:"RDMA-CM default RoCE mode (default \"RoCE v2\")"`
	Keys        Fields
	Pos         Pos
}

// rawDCQCN is policy.dcqcn. Units and ranges: intent.DCQCNParams.
type rawDCQCN struct {
	RateReduceMonitorPeriod          *Duration `yaml:"rateReduceMonitorPeriod" doc:"at most one rate cut per QP per this period (mlx5 rp_rate_reduce_monitor_period, whole us, 1us-2147483647us; mlx5 default 4us)"`
	TimeReset                        *Duration `yaml:"timeReset" doc:"rate-increase timer (rp_time_reset, whole us, 1us-32767us; mlx5 default 300us)"`
	ByteReset                        *Size     `yaml:"byteReset" doc:"rate-increase byte counter (rp_byte_reset, bytes, 1B-2147483647B; mlx5 default 32767B)"`
	Threshold                        *int      `yaml:"threshold" range:"1,31" doc:"timer/byte-counter events before additive and then hyper increase (rp_threshold, 1-31; mlx5 default 1)"`
	AIRate                           *Rate     `yaml:"aiRate" doc:"additive-increase step (rp_ai_rate, whole Mb/s, from 1M; mlx5 default 5M)"`
	HAIRate                          *Rate     `yaml:"haiRate" doc:"hyper-increase step (rp_hai_rate, whole Mb/s, from 1M; mlx5 default 50M)"`
	MinDecreaseFactor                *Percent  `yaml:"minDecreaseFactor" doc:"a rate cut leaves at least this share of the rate (rp_min_dec_fac, whole percent 0-100; mlx5 default 50%)"`
	MinRate                          *Rate     `yaml:"minRate" doc:"the rate is never cut below this (rp_min_rate, whole Mb/s, from 1M; mlx5 default 1M)"`
	RateOnFirstCNP                   *Rate     `yaml:"rateOnFirstCNP" doc:"rate set on a QP's first CNP, 0 = line rate (rp_rate_to_set_on_first_cnp, whole Mb/s; mlx5 default 0)"`
	G                                *int      `yaml:"g" range:"0,1023" doc:"alpha EWMA gain, mlx5 dce_tcp_g (0-1023; alpha moves by (1024-g)/1024 per period; mlx5 default 1019)"`
	AlphaUpdatePeriod                *Duration `yaml:"alphaUpdatePeriod" doc:"alpha update period, mlx5 dce_tcp_rtt (whole us, 1us-131071us; mlx5 default 1us)"`
	InitialAlpha                     *int      `yaml:"initialAlpha" range:"0,1023" doc:"alpha on a QP's first CNP, in 1/1024 (rp_initial_alpha_value, 0-1023; mlx5 default 1023)"`
	GD                               *int      `yaml:"gd" range:"1,11" doc:"rate-cut divider exponent (rp_gd, 1-11; mlx5 default 11)"`
	ClampTargetRate                  *bool     `yaml:"clampTargetRate" doc:"every cut sets the target rate to the current rate (rp_clamp_tgt_rate; mlx5 default false)"`
	ClampTargetRateAfterTimeIncrease *bool     `yaml:"clampTargetRateAfterTimeIncrease" doc:"clamp the target rate when the last increase came from the timer (rp_clamp_tgt_rate_ati; mlx5 default true)"`
	MinTimeBetweenCNPs               *Duration `yaml:"minTimeBetweenCNPs" doc:"notification point: at most one CNP per QP per this time (np_min_time_between_cnps, whole us, 0-65535us; mlx5 default 4us)"`
	Keys                             Fields
	Pos                              Pos
}

// rawNICAccel is policy.nicAccelerations (ConnectX ROCE_ACCL).
type rawNICAccel struct {
	AdaptiveRetransmission *bool `yaml:"adaptiveRetransmission" doc:"adaptive retransmission timeouts (ROCE_ACCL roce_adp_retrans_en)"`
	TxWindow               *bool `yaml:"txWindow" doc:"transmit window: bound the packets in flight per QP (ROCE_ACCL roce_tx_window_en)"`
	SlowRestart            *bool `yaml:"slowRestart" doc:"restart slowly after a retransmission (ROCE_ACCL roce_slow_restart_en)"`
	SlowRestartIdle        *bool `yaml:"slowRestartIdle" doc:"restart slowly after an idle QP (ROCE_ACCL roce_slow_restart_idle_en)"`
	SelectiveRepeat        *bool `yaml:"selectiveRepeat" doc:"force selective repeat instead of go-back-N (ROCE_ACCL selective_repeat_forced_en)"`
	Keys                   Fields
	Pos                    Pos
}

type rawInventory struct {
	Switches []rawSwitch `yaml:"switches" doc:"switches; names may use ranges like leaf{1..4}"`
	Hosts    []rawHost   `yaml:"hosts" doc:"hosts; names and addresses may use ranges like gpu{1..8}"`
	Links    []rawLink   `yaml:"links" doc:"cables as [node:port, node:port]; ranges on both sides zip"`
	Pos      Pos
}

type rawSwitch struct {
	Name                  string          `yaml:"name" required:"true" doc:"switch name (ranges like leaf{1..4} expand)"`
	Platform              string          `yaml:"platform" required:"true" enum:"srlinux,sonic,eos,openconfig" doc:"srlinux, sonic, eos or openconfig"`
	Address               string          `yaml:"address" required:"true" doc:"gNMI host:port (ranges zip with the name)"`
	Credentials           *rawCredentials `yaml:"credentials" doc:"where to read the gNMI username/password; never the values themselves"`
	TLS                   *rawTLS         `yaml:"tls" doc:"gNMI TLS settings (TLS is on by default)"`
	Proxy                 string          `yaml:"proxy" doc:"HTTP CONNECT proxy to reach the switch's gNMI through, http://host:port; default none (HTTPS_PROXY and the like are ignored)"`
	Profile               string          `yaml:"profile" enumfrom:"profiles" doc:"platform release profile (internal/profile), e.g. srlinux-25.3 or sonic-202411; default: the platform's newest, except SONiC's: sonic-202411, whose payloads later releases accept too"`
	ASIC                  string          `yaml:"asic" enumfrom:"asics" doc:"switching ASIC, e.g. spectrum2, tomahawk4, trident4, jericho2 (default: the profile's model)"`
	MaxLosslessPriorities *int            `yaml:"maxLosslessPriorities" range:"1,8" doc:"override the platform's lossless priorities per port"`
	Buffer                *Size           `yaml:"buffer" doc:"ingress headroom available per port (e.g. 200KB); headroom is checked against it"`
	PortDefaults          *rawPort        `yaml:"portDefaults" doc:"speed, cable, mtu applied to ports that do not set them"`
	Ports                 []rawPort       `yaml:"ports" doc:"front-panel ports; names may use ranges like ethernet-1/{1..32} or Ethernet{0..124..4}"`
	Keys                  Fields
	Pos                   Pos
}

type rawCredentials struct {
	UsernameEnv  string `yaml:"usernameEnv" doc:"environment variable holding the username"`
	PasswordEnv  string `yaml:"passwordEnv" doc:"environment variable holding the password"`
	UsernameFile string `yaml:"usernameFile" doc:"file holding the username"`
	PasswordFile string `yaml:"passwordFile" doc:"file holding the password"`
	Username     string `yaml:"username" doc:"NOT ALLOWED: secrets never go in the intent (use usernameEnv/usernameFile)"`
	Password     string `yaml:"password" doc:"NOT ALLOWED: secrets never go in the intent (use passwordEnv/passwordFile)"`
	Keys         Fields
	Pos          Pos
}

type rawTLS struct {
	CA         string `yaml:"ca" doc:"CA bundle (PEM) to verify the switch, relative to this file"`
	Cert       string `yaml:"cert" doc:"client certificate for mTLS"`
	Key        string `yaml:"key" doc:"client key for mTLS"`
	ServerName string `yaml:"serverName" doc:"name to verify instead of the address host"`
	Insecure   *bool  `yaml:"insecure" doc:"plaintext gRPC without TLS (lab only)"`
	SkipVerify *bool  `yaml:"skipVerify" doc:"TLS without verifying the switch certificate (lab only)"`
	Keys       Fields
	Pos        Pos
}

type rawPort struct {
	Name         string  `yaml:"name" doc:"port name; ranges like ethernet-1/{1..32} expand"`
	Speed        *Rate   `yaml:"speed" doc:"line rate, e.g. 100G, 400G"`
	Cable        *Length `yaml:"cable" doc:"cable length, e.g. 3m, 100m (default 100m, as NVIDIA's preset)"`
	MTU          *int    `yaml:"mtu" range:"1280,16383" doc:"port IP MTU (default policy.mtu)"`
	Subinterface *int    `yaml:"subinterface" range:"0,4095" doc:"subinterface classifiers attach to (SR Linux, default 0)"`
	Keys         Fields
	Pos          Pos
}

type rawHost struct {
	Name    string   `yaml:"name" required:"true" doc:"host name (ranges like gpu{1..8} expand)"`
	Address string   `yaml:"address" doc:"local, or an SSH host[:port] (ranges zip with the name)"`
	SSH     *rawSSH  `yaml:"ssh" doc:"how to reach a remote host"`
	NICs    []rawNIC `yaml:"nics" doc:"RoCE interfaces"`
	Keys    Fields
	Pos     Pos
}

type rawSSH struct {
	User                  string `yaml:"user" doc:"login user (default root)"`
	Port                  *int   `yaml:"port" range:"1,65535" doc:"SSH port (default 22)"`
	KeyFile               string `yaml:"keyFile" doc:"private key file; empty = ssh-agent"`
	KnownHosts            string `yaml:"knownHosts" doc:"known_hosts file (default ~/.ssh/known_hosts); host keys are always verified"`
	InsecureIgnoreHostKey *bool  `yaml:"insecureIgnoreHostKey" doc:"skip host key verification (lab only)"`
	Keys                  Fields
	Pos                   Pos
}

type rawNIC struct {
	Interface string  `yaml:"interface" required:"true" doc:"netdev name, e.g. ens1f0np0"`
	RDMA      string  `yaml:"rdma" doc:"RDMA device, e.g. mlx5_0 (required for RDMA validation)"`
	RDMAPort  *int    `yaml:"rdmaPort" range:"1,255" doc:"RDMA port (default 1)"`
	Speed     *Rate   `yaml:"speed" doc:"line rate, e.g. 400G"`
	Cable     *Length `yaml:"cable" doc:"cable length written to the PFC delay field on mlx5"`
	Address   string  `yaml:"address" doc:"IPv4 address traffic tests use on this NIC (ranges zip with the host name)"`
	Keys      Fields
	Pos       Pos
}

type rawValidation struct {
	MinBandwidth   *Percent  `yaml:"minBandwidth" doc:"minimum bandwidth as a share of line rate (default 90%)"`
	MaxP99Latency  *Duration `yaml:"maxP99Latency" doc:"maximum p99 latency (default: not checked)"`
	MaxP999Latency *Duration `yaml:"maxP999Latency" doc:"maximum p99.9 latency (default: not checked)"`
	Duration       *Duration `yaml:"duration" doc:"length of each bandwidth test (default 10s)"`
	Iterations     *int      `yaml:"iterations" range:"5,100000000" doc:"iterations of each latency test (default 10000; perftest needs at least 5)"`
	MessageSize    *Size     `yaml:"messageSize" doc:"message size (default 64KiB for bandwidth)"`
	Incast         *int      `yaml:"incast" range:"0,100000" doc:"senders in the incast test (default: all other hosts)"`
	Lossy          *rawLossy `yaml:"lossy" doc:"budgets that judge a RoCE class that is not lossless (policy.mode lossy): drops, retransmissions, goodput lost to them"`
	// PredictionTolerance: validate warns where measured and simulated differ by more.
	PredictionTolerance *Percent `yaml:"predictionTolerance" doc:"how far a measured figure (throughput, drops, pause frames, ECN marks) may differ from what the simulator predicts for the same flows before validate warns, relative to the larger (default 20%)"`
	Keys                Fields
	Pos                 Pos
}

type rawLossy struct {
	MaxDropRate           *Percent `yaml:"maxDropRate" doc:"largest share of a switch queue's RoCE packets it may drop (default 0.1%)"`
	MaxRetransmissionRate *Percent `yaml:"maxRetransmissionRate" doc:"largest share of recoveries (NAK sequence errors, implied NAKs, ACK timeouts, RNR NAKs) per RoCE packet a NIC sent (default 0.1%)"`
	MaxGoodputLoss        *Percent `yaml:"maxGoodputLoss" doc:"largest share of the RoCE packets sent that were lost or discarded out of sequence, i.e. sent again (default 5%)"`
	Keys                  Fields
	Pos                   Pos
}

// rawLink is [a, b] or {a: ..., b: ...}, each "node:port". Where the
// link and its ends are is kept as line and column (the file is the
// part's): an inventory has tens of thousands of links.
type rawLink struct {
	A, B         string
	at, aAt, bAt lineCol
}

// lineCol is a position in the file being read.
type lineCol struct{ line, col int32 }

func lineColOf(n *yaml.Node) lineCol { return lineCol{int32(n.Line), int32(n.Column)} }

// in is the position in file.
func (p lineCol) in(file string) Pos { return Pos{File: file, Line: int(p.line), Col: int(p.col)} }

func (l *rawLink) decodeNode(n *yaml.Node) error {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	l.at = lineColOf(n)
	var a, b *yaml.Node
	switch n.Kind {
	case yaml.SequenceNode:
		if len(n.Content) != 2 {
			return fmt.Errorf("a link is [node:port, node:port]; got %d items", len(n.Content))
		}
		a, b = n.Content[0], n.Content[1]
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			switch k := n.Content[i].Value; {
			case k == "a" && a == nil:
				a = n.Content[i+1]
			case k == "b" && b == nil:
				b = n.Content[i+1]
			case k == "a" || k == "b":
				return fmt.Errorf("duplicate link field %q (line %d)", k, n.Content[i].Line)
			default:
				return fmt.Errorf("unknown link field %q (want a and b)", k)
			}
		}
		if a == nil || b == nil {
			return fmt.Errorf("a link needs both a and b")
		}
	default:
		return fmt.Errorf("a link is [node:port, node:port]")
	}
	if a.Kind != yaml.ScalarNode || b.Kind != yaml.ScalarNode {
		return fmt.Errorf("link ends must be strings like leaf1:ethernet-1/1")
	}
	l.A, l.B = a.Value, b.Value
	l.aAt, l.bAt = lineColOf(a), lineColOf(b)
	return nil
}

// Size is a byte count written with a unit (150KB, 1.5MB, 19456).
type Size int64

func (s *Size) decodeNode(n *yaml.Node) error {
	v, err := scalarString(n)
	if err != nil {
		return err
	}
	b, err := ParseSize(v)
	*s = Size(b)
	return err
}

// Rate is a line rate in bits/s written with a unit (100G).
type Rate int64

func (r *Rate) decodeNode(n *yaml.Node) error {
	v, err := scalarString(n)
	if err != nil {
		return err
	}
	b, err := ParseRate(v)
	*r = Rate(b)
	return err
}

// Length is a cable length in metres written with a unit (3m).
type Length float64

func (l *Length) decodeNode(n *yaml.Node) error {
	v, err := scalarString(n)
	if err != nil {
		return err
	}
	m, err := ParseLength(v)
	*l = Length(m)
	return err
}

// Percent is 0..100 written as 50% or 50.
type Percent float64

func (p *Percent) decodeNode(n *yaml.Node) error {
	v, err := scalarString(n)
	if err != nil {
		return err
	}
	f, err := ParsePercent(v)
	*p = Percent(f)
	return err
}

// Duration is a time.Duration written with a unit (200ms).
type Duration time.Duration

func (d *Duration) decodeNode(n *yaml.Node) error {
	v, err := scalarString(n)
	if err != nil {
		return err
	}
	if n.Tag == "!!int" && v != "0" {
		return fmt.Errorf("duration %s needs a unit (e.g. %sms)", v, v)
	}
	t, err := ParseDuration(v)
	*d = Duration(t)
	return err
}

func scalarString(n *yaml.Node) (string, error) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" || n.Tag == "!!bool" {
		return "", fmt.Errorf("want a value with a unit, got %s", kindName(n))
	}
	return strings.TrimSpace(n.Value), nil
}
