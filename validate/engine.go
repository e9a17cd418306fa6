package validate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/remote"
	"github.com/fabricctl/fabricctl/validate/perftest"
	"github.com/fabricctl/fabricctl/validate/udpflow"
)

// Test kinds an engine runs.
const (
	KindBandwidth = "bandwidth"
	KindLatency   = "latency"
)

// Endpoint is one host NIC taking part in a flow.
type Endpoint struct {
	Host string
	NIC  intent.NIC
}

func (e Endpoint) String() string { return e.Host + ":" + e.NIC.Interface }

// Flow is one directed test: Client sends to Server.
type Flow struct {
	Test   string // "all-pairs", "incast"
	Round  int
	Client Endpoint
	Server Endpoint
}

// Engine runs the flows of one round at the same time.
type Engine interface {
	Name() string
	// Run runs flows concurrently and returns one result per flow, in order;
	// a flow that could not run has Err set.
	Run(ctx context.Context, kind string, flows []Flow) []FlowResult
	// MeasuresLatency reports whether bandwidth flows also carry latency
	// (the UDP engine timestamps every packet), so no separate latency
	// rounds are needed.
	MeasuresLatency() bool
}

func lineGbps(a, b intent.NIC) float64 {
	s := a.Speed
	if b.Speed > 0 && (s == 0 || b.Speed < s) {
		s = b.Speed
	}
	return float64(s) / 1e9
}

func newResult(f Flow, tos int) FlowResult {
	return FlowResult{Test: f.Test, Round: f.Round, Client: f.Client.String(), Server: f.Server.String(),
		LineGbps: lineGbps(f.Client.NIC, f.Server.NIC), ServerLineGbps: float64(f.Server.NIC.Speed) / 1e9, ToS: tos}
}

// RDMAEngine runs perftest between host NICs.
type RDMAEngine struct {
	Perftest *perftest.Engine
	// Runner returns the command runner of a host.
	Runner func(host string) (remote.Runner, error)
	// BandwidthTool and LatencyTool default to ib_write_bw and ib_write_lat.
	BandwidthTool, LatencyTool string
	ToS                        int
	RDMACM                     bool
	Duration                   time.Duration // bandwidth tests (-D)
	Iterations                 int           // latency tests (-n)
	Size                       int64         // bandwidth message size (-s)
	// BasePort is the first perftest TCP port; flow i of a round uses BasePort+i.
	BasePort int
	// GID finds the GID index of a host NIC (default perftest.RemoteGIDIndex:
	// sysfs read through the host's runner, the same rule on both ends).
	GID func(ctx context.Context, r remote.Runner, dev string, port int, netdev string, addr netip.Addr) (perftest.GID, error)

	mu   sync.Mutex
	gids map[string]gidEntry
}

type gidEntry struct {
	index int
	addr  string // the GID's IPv4 address
}

var _ Engine = (*RDMAEngine)(nil)

// Name implements Engine.
func (e *RDMAEngine) Name() string { return "rdma" }

// MeasuresLatency implements Engine.
func (e *RDMAEngine) MeasuresLatency() bool { return false }

// Spec returns the perftest spec of a test kind.
func (e *RDMAEngine) Spec(kind string) perftest.Spec {
	if kind == KindLatency {
		tool := e.LatencyTool
		if tool == "" {
			tool = "ib_write_lat"
		}
		return perftest.Spec{Tool: tool, Iterations: e.Iterations, ToS: e.ToS, RDMACM: e.RDMACM}
	}
	tool := e.BandwidthTool
	if tool == "" {
		tool = "ib_write_bw"
	}
	// perftest's -D runs whole seconds: unset is 10s, anything shorter than
	// a second is its shortest run.
	d := e.Duration.Truncate(time.Second)
	switch {
	case e.Duration <= 0:
		d = 10 * time.Second
	case d < time.Second:
		d = time.Second
	}
	return perftest.Spec{Tool: tool, Duration: d, Size: e.Size, ToS: e.ToS, RDMACM: e.RDMACM}
}

func (e *RDMAEngine) side(ctx context.Context, ep Endpoint) (perftest.Side, error) {
	if ep.NIC.RDMADevice == "" {
		return perftest.Side{}, fmt.Errorf("host %s nic %s: the intent names no RDMA device (nics[].rdma); use the udp engine for NICs without RDMA", ep.Host, ep.NIC.Interface)
	}
	r, err := e.Runner(ep.Host)
	if err != nil {
		return perftest.Side{}, err
	}
	port := ep.NIC.RDMAPort
	if port == 0 {
		port = 1
	}
	key := ep.Host + "/" + ep.NIC.RDMADevice + "/" + fmt.Sprint(port)
	e.mu.Lock()
	ge, ok := e.gids[key]
	e.mu.Unlock()
	if !ok {
		var addr netip.Addr
		if ep.NIC.Address != "" {
			addr, err = netip.ParseAddr(ep.NIC.Address)
			if err != nil {
				return perftest.Side{}, fmt.Errorf("host %s nic %s: address %q: %w", ep.Host, ep.NIC.Interface, ep.NIC.Address, err)
			}
		}
		gid := e.GID
		if gid == nil {
			gid = perftest.RemoteGIDIndex
		}
		g, err := gid(ctx, r, ep.NIC.RDMADevice, port, ep.NIC.Interface, addr)
		if err != nil {
			return perftest.Side{}, err
		}
		ge.index = g.Index
		if v4, ok := g.IPv4(); ok {
			ge.addr = v4.String()
		}
		e.mu.Lock()
		if e.gids == nil {
			e.gids = map[string]gidEntry{}
		}
		e.gids[key] = ge
		e.mu.Unlock()
	}
	addr := ep.NIC.Address
	if addr == "" {
		addr = ge.addr // the server's RoCE address, from its GID
	}
	return perftest.Side{Runner: r, End: perftest.End{Device: ep.NIC.RDMADevice, Port: port, GIDIndex: ge.index}, Addr: addr}, nil
}

// Run implements Engine.
func (e *RDMAEngine) Run(ctx context.Context, kind string, flows []Flow) []FlowResult {
	out := make([]FlowResult, len(flows))
	base := e.BasePort
	if base == 0 {
		base = 18515
	}
	spec := e.Spec(kind)
	var wg sync.WaitGroup
	for i, f := range flows {
		out[i] = newResult(f, e.ToS)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &out[i]
			srv, err := e.side(ctx, f.Server)
			if err == nil {
				var cli perftest.Side
				cli, err = e.side(ctx, f.Client)
				if err == nil {
					var res *perftest.PairResult
					res, err = e.Perftest.RunPair(ctx, spec, srv, cli, base+i)
					if res != nil {
						r.Command = strings.Join(res.ClientArgv, " ")
					}
					if err == nil {
						fillPerftest(r, res.Report)
					}
				}
			}
			if err != nil {
				r.Err = err.Error()
			}
		}()
	}
	wg.Wait()
	return out
}

func fillPerftest(r *FlowResult, rep *perftest.Report) {
	for _, row := range rep.Bandwidth {
		if row.AvgGbps > r.Gbps {
			r.Gbps = row.AvgGbps
		}
	}
	us := func(v *float64) time.Duration {
		if v == nil {
			return 0
		}
		return time.Duration(*v * float64(time.Microsecond))
	}
	for _, row := range rep.Latency {
		r.P50 = us(row.TypicalUsec)
		if r.P50 == 0 {
			r.P50 = us(row.AvgUsec)
		}
		r.P99, r.P999 = us(row.P99Usec), us(row.P999Usec)
	}
}

// UDPEngine sends DSCP-marked UDP flows (package udpflow) between host NICs,
// in this process. Exec runs socket creation inside a host's network context
// (a network namespace's Do); the sockets stay there.
type UDPEngine struct {
	// Exec runs f as host; nil runs it in this process's namespace.
	Exec func(host string, f func() error) error
	// ToS is the IP ToS byte of every flow (the RoCE class: 106).
	ToS int
	// Size is the UDP payload size (default 1000 bytes).
	Size int
	// Packets per flow (default 2000) at Rate packets/s (default 10000).
	Packets int
	Rate    float64
	// BasePort: flow i of a round listens on BasePort+i (default 47000).
	BasePort int
	// Idle ends a receiver that heard nothing for this long (default 1s).
	Idle time.Duration
}

var _ Engine = (*UDPEngine)(nil)

// Name implements Engine.
func (e *UDPEngine) Name() string { return "udp" }

// MeasuresLatency implements Engine.
func (e *UDPEngine) MeasuresLatency() bool { return true }

func (e *UDPEngine) exec(host string, f func() error) error {
	if e.Exec == nil {
		return f()
	}
	return e.Exec(host, f)
}

// udpSettings are the per-flow settings of the udp engines (UDPEngine,
// RemoteUDPEngine) with their defaults applied.
type udpSettings struct {
	size, packets int
	rate          float64
	base          int
	idle          time.Duration
}

// newUDPSettings applies the defaults: 1000-byte payloads, 2000 packets at
// 10000 packets/s, ports from 47000, 1s idle.
func newUDPSettings(size, packets int, rate float64, base int, idle time.Duration) udpSettings {
	u := udpSettings{size: size, packets: packets, rate: rate, base: base, idle: idle}
	if u.size == 0 {
		u.size = 1000
	}
	if u.packets == 0 {
		u.packets = 2000
	}
	if u.rate == 0 {
		u.rate = 10000
	}
	if u.base == 0 {
		u.base = 47000
	}
	if u.idle == 0 {
		u.idle = time.Second
	}
	return u
}

// gapIdle is the shortest idle that does not end a flow between two of its
// paced packets: three packet intervals.
func (u udpSettings) gapIdle() time.Duration {
	return time.Duration(3 / u.rate * float64(time.Second))
}

// flowTime is how long one flow takes to send at the paced rate.
func (u udpSettings) flowTime() time.Duration {
	return time.Duration(float64(u.packets) / u.rate * float64(time.Second))
}

// Run implements Engine: receivers first, then all senders at once.
func (e *UDPEngine) Run(ctx context.Context, kind string, flows []Flow) []FlowResult {
	u := newUDPSettings(e.Size, e.Packets, e.Rate, e.BasePort, e.Idle)
	size, packets, rate, base, idle := u.size, u.packets, u.rate, u.base, u.idle
	out := make([]FlowResult, len(flows))
	recv := make([]*udpflow.Receiver, len(flows))
	// One token per run: a receiver counts only packets that carry it,
	// come from its flow's client NIC and have its flow id.
	token, err := udpflow.NewToken()
	if err != nil {
		for i, f := range flows {
			out[i] = newResult(f, e.ToS)
			out[i].Err = fmt.Sprintf("udp run token: %v", err)
		}
		return out
	}
	for i, f := range flows {
		out[i] = newResult(f, e.ToS)
		addr, err := netip.ParseAddr(f.Server.NIC.Address)
		if err != nil {
			out[i].Err = fmt.Sprintf("host %s nic %s: address %q: the udp engine needs the NIC's IPv4 address", f.Server.Host, f.Server.NIC.Interface, f.Server.NIC.Address)
			continue
		}
		filter := udpflow.Filter{Token: token, Flows: []uint32{uint32(i + 1)}, Packets: uint64(packets)}
		if src, err := netip.ParseAddr(f.Client.NIC.Address); err == nil {
			filter.Sources = []netip.Addr{src}
		}
		err = e.exec(f.Server.Host, func() error {
			r, err := udpflow.Listen(netip.AddrPortFrom(addr, uint16(base+i)))
			if err == nil {
				r.SetFilter(filter)
			}
			recv[i] = r
			return err
		})
		if err != nil {
			out[i].Err = fmt.Sprintf("host %s: %v", f.Server.Host, err)
		}
	}
	defer func() {
		for _, r := range recv {
			if r != nil {
				r.Close()
			}
		}
	}()
	var wg sync.WaitGroup
	stats := make([][]udpflow.FlowStats, len(flows))
	sent := make([]udpflow.SendStats, len(flows))
	budget := u.flowTime() + 10*time.Second
	rctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	// A receiver here knows when its sender is done: until then a pause
	// (a slow rate, a descheduled sender) is not the end of the flow. Once
	// the sender returned, idle is what the last packets (and lost end
	// markers) get to arrive.
	senderDone := make([]func(), len(flows))
	for i := range flows {
		if recv[i] == nil {
			continue
		}
		fctx, fcancel := context.WithCancel(rctx)
		senderDone[i] = func() { time.AfterFunc(idle, fcancel) }
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer fcancel()
			stats[i], _ = recv[i].Run(fctx, []uint32{uint32(i + 1)}, budget)
		}()
	}
	var swg sync.WaitGroup
	for i, f := range flows {
		if recv[i] == nil {
			continue
		}
		swg.Add(1)
		go func() {
			defer swg.Done()
			defer senderDone[i]()
			var c *net.UDPConn
			err := e.exec(f.Client.Host, func() error {
				var err error
				c, err = udpflow.Dial(recv[i].Addr(), e.ToS)
				return err
			})
			if err != nil {
				out[i].Err = fmt.Sprintf("host %s: %v", f.Client.Host, err)
				_ = recv[i].Close() // nothing will arrive
				return
			}
			defer c.Close()
			st, err := udpflow.Send(rctx, c, udpflow.SendConfig{Flow: uint32(i + 1), ToS: e.ToS, Size: size, Count: packets, Rate: rate, Token: token})
			sent[i] = st
			if err != nil {
				out[i].Err = fmt.Sprintf("host %s: %v", f.Client.Host, err)
			}
		}()
	}
	swg.Wait()
	wg.Wait()
	for i := range flows {
		if recv[i] == nil || out[i].Err != "" {
			continue
		}
		fillUDP(&out[i], sent[i], stats[i], uint32(i+1), e.ToS)
	}
	return out
}

func fillUDP(r *FlowResult, sent udpflow.SendStats, stats []udpflow.FlowStats, id uint32, tos int) {
	r.Sent = sent.Sent
	for _, s := range stats {
		r.Rejected = max(r.Rejected, s.Rejected)
	}
	for _, s := range stats {
		if s.Flow != id {
			continue
		}
		r.Received, r.Duplicates, r.Reordered, r.SocketDrops = s.Received, s.Duplicates, s.Reordered, s.SocketDrops
		if sent.Sent > s.Unique {
			r.Lost = sent.Sent - s.Unique
		}
		r.Gbps = s.Gbps
		r.P50, r.P99, r.P999 = s.P50, s.P99, s.P999
		for t, n := range s.ToS {
			if remarked(tos, int(t)) {
				r.ToSMismatch += n
			}
			if t&3 == 3 {
				r.ECNMarked += n
			}
		}
		return
	}
	r.Lost = sent.Sent
}

// remarked reports whether a packet sent with ToS sent arrived re-marked:
// another DSCP, or ECN bits other than those sent and CE. A congested queue
// may turn ECT into CE; a device that clears ECT to Not-ECT (ECN bleaching)
// leaves WRED nothing to mark, so it drops where it should have marked.
func remarked(sent, got int) bool {
	if got>>2 != sent>>2 {
		return true
	}
	se, ge := sent&3, got&3
	return ge != se && !(ge == 3 && se != 0)
}

// errNoHosts is returned when the intent has fewer than two hosts with a NIC.
var errNoHosts = errors.New("validate: traffic needs at least two hosts with a NIC")
