package sim

import (
	"math"
	"math/rand"

	"github.com/fabricctl/fabricctl/intent"
)

// Frame sizes on the wire.
const (
	// wireOverhead is preamble/SFD 8 B + inter-frame gap 12 B.
	wireOverhead = 20
	// pauseWire is a PFC frame (64 B MAC control frame) on the wire: 672 bit
	// times, the "pause frame" term of the IEEE 802.1Qbb headroom model.
	pauseWire = 64 + wireOverhead
	// roceHeaders is what a RoCEv2 data frame adds to its RDMA payload:
	// Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4.
	roceHeaders = 62
	// cnpWire is a CNP: Ethernet+IPv4+UDP+BTH, 16 reserved bytes, ICRC, FCS
	// padded to the 64 B minimum... 78 B, on the wire.
	cnpWire = 78 + wireOverhead
	// ackWire is an RC ACK: Ethernet+IPv4+UDP+BTH+AETH+ICRC+FCS, padded to
	// the 64 B minimum plus what RoCE adds: 66 B, on the wire.
	ackWire = 66 + wireOverhead
	// pauseQuantaMax is the quanta of an XOFF frame (0xFFFF x 512 bit times).
	pauseQuantaMax = 0xFFFF
)

type pktKind uint8

const (
	pktData pktKind = iota
	pktCNP
	pktAck // the RC ACK of a whole message (one per flow with a size)
)

// packet is one frame in flight or queued. Packets are pooled.
type packet struct {
	f       *flow
	kind    pktKind
	prio    int8
	ecn     bool // CE set by a switch
	hop     int16
	payload int32
	wire    int32
	in      *port // ingress port on the current switch (priority-group accounting)
	next    *packet
}

// fifo is a singly linked queue of packets.
type fifo struct {
	head, tail *packet
	n          int
}

func (q *fifo) push(p *packet) {
	p.next = nil
	if q.tail == nil {
		q.head = p
	} else {
		q.tail.next = p
	}
	q.tail = p
	q.n++
}

func (q *fifo) pop() *packet {
	p := q.head
	q.head = p.next
	if q.head == nil {
		q.tail = nil
	}
	p.next = nil
	q.n--
	return p
}

// node is a switch or a host.
type node struct {
	name  string
	host  bool
	idx   int
	ports []*port
	flows []*flow // host: flows it sends, in start order
	rr    int     // host: round-robin position among flows
	// host receive side (slow receiver): frames wait in rx until drained.
	drainBps float64 // 0 = drains at once (a normal receiver)
	slow     bool
	rx       fifo
	rxBytes  int64
	draining bool
}

// pfcState is what one port does for one priority.
type prioState struct {
	q      fifo
	qBytes int64
	// received pause: the egress is paused on [pauseStart, pauseEnd).
	pauseStart, pauseEnd Time
	pauseAcct            Time // paused time accounted up to here
	lastPauseRx          Time
	// ingress priority-group accounting (frames that entered on this port).
	pg        int64
	xoffSent  bool
	refreshOn bool
	// DWRR
	deficit int64
	// watchdog
	wdStuck  Time
	wdLastTx int64
	storm    bool
	// statistics
	st        PrioStats
	qIntegral float64 // bytes x ps
	qChanged  Time
	// a host's receive buffer (slow receiver): the bytes of this
	// priority that arrived on this port and wait to be drained, and
	// their time integral, for a time-averaged mean.
	rxBytes    int64
	rxIntegral float64 // bytes x ps
	rxChanged  Time
}

// port is one end of a link: the egress queues and transmitter towards the
// peer, and the ingress accounting of what arrives from it.
type port struct {
	n      *node
	name   string
	idx    int // global index
	peer   *port
	down   bool
	bps    float64
	psByte float64 // picoseconds per byte
	delay  Time    // propagation (5 ns/m) + one interface delay (IEEE bound)
	// ctrlDelay is delay for the pause frames p sends: a NIC's reach its
	// switch after the cable's propagation alone (newPort).
	ctrlDelay Time
	resp      Time // this port's response time to a received pause (PauseQuanta x 512 bit times)
	quantum   Time // one pause quantum (512 bit times)
	busy      bool
	wakeAt    Time
	ctrl      []ctrlFrame
	pr        [8]prioState
	rr        int
	// lossless accounting
	headroom int64 // per lossless priority group, bytes beyond XOFF
	hrPool   int64 // per port headroom pool
	buffer   int64 // the switch's buffer per port (intent switches[].buffer), 0 = unknown
	// wdAction is what the PFC watchdog does on this switch port's stuck
	// queues, as its platform takes the intent's (portfacts).
	wdAction intent.WatchdogAction
	// factsXOFF is the port's XOFF point as portfacts derives it (the
	// smallest of its lossless classes'), -1 when unknown.
	factsXOFF int64
	hrUsed    int64
	// cfg is the port's configuration as the switch holds it
	// (SetPortConfig), nil for the intent's.
	cfg *PortConfig
	// per priority, as the run applies them (Sim.configure): PFC, the
	// priority group's headroom, the occupancy at which XOFF and XON are
	// sent, and WRED-ECN of the egress queue.
	pfc   [8]bool
	hrP   [8]int64
	xoffP [8]int64
	xonP  [8]int64
	mk    [8]markCfg
	// sampling
	sampledPaused [8]Time
}

type ctrlFrame struct {
	prio   int8
	quanta uint16
}

func (p *port) txTime(bytes int32) Time { return Time(math.Round(float64(bytes) * p.psByte)) }

// paused reports whether priority prio's egress is paused at t by the peer.
func (p *port) paused(prio int, t Time) bool {
	s := &p.pr[prio]
	return t >= s.pauseStart && t < s.pauseEnd
}

func (p *port) accountPause(prio int, now Time) {
	s := &p.pr[prio]
	from := max(s.pauseAcct, s.pauseStart)
	to := min(now, s.pauseEnd)
	if to > from {
		s.st.PausedTime += to - from
	}
	s.pauseAcct = now
}

// accountRx adds the receive buffer's bytes of prio since the last change
// to its time integral.
func (p *port) accountRx(prio int, now Time) {
	s := &p.pr[prio]
	s.rxIntegral += float64(s.rxBytes) * float64(now-s.rxChanged)
	s.rxChanged = now
}

func (p *port) accountQueue(prio int, now Time) {
	s := &p.pr[prio]
	s.qIntegral += float64(s.qBytes) * float64(now-s.qChanged)
	s.qChanged = now
}

// flow is one RoCE QP sending write-like traffic: one MTU of payload per
// frame, paced at the DCQCN reaction point's current rate.
type flow struct {
	id       int
	src, dst *node
	prio     int
	path     []*port // egress port at each hop: path[0] is the sender's NIC
	rpath    []*port // the way back for CNPs
	size     int64   // payload bytes, 0 = send until the end of the run
	start    Time
	sent     int64 // payload bytes handed to the NIC
	recv     int64 // payload bytes delivered to the receiver
	finish   Time  // the last byte reached the receiver
	done     bool
	acked    Time // the ACK of the message reached the sender (0 = not yet)
	active   bool
	lastSend Time
	lastWire int32
	line     float64
	// DCQCN reaction point
	rp rpState
	// DCQCN notification point (at the receiver)
	lastCNP    Time
	cnpSent    int64
	cnpRecv    int64
	marksRecv  int64
	recvWindow int64 // delivered bytes since the last sample (fairness)
}

func newRand(seed int64) *rand.Rand { return rand.New(rand.NewSource(seed)) }
