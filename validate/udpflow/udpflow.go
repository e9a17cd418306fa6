package udpflow

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"slices"
	"sync"
	"syscall"
	"time"
)

// HeaderLen is the size of the header every packet starts with.
const HeaderLen = 40

// MinSize and MaxSize bound the UDP payload size.
const (
	MinSize = HeaderLen
	MaxSize = 65000
)

var magic = [4]byte{'F', 'C', 'V', '1'}

const (
	kindData = 1
	kindEnd  = 2
)

// header is the packet header: magic[4] kind[1] pad[3] flow[4] pad[4]
// seq[8] sendUnixNano[8] token[8], big endian. The token is the run's
// (Filter.Token): a receiver that has one drops packets without it.
type header struct {
	kind  uint8
	flow  uint32
	seq   uint64
	sent  int64
	token uint64
}

func (h header) put(b []byte) {
	copy(b[0:4], magic[:])
	b[4] = h.kind
	binary.BigEndian.PutUint32(b[8:12], h.flow)
	binary.BigEndian.PutUint64(b[16:24], h.seq)
	binary.BigEndian.PutUint64(b[24:32], uint64(h.sent))
	binary.BigEndian.PutUint64(b[32:40], h.token)
}

func parseHeader(b []byte) (header, bool) {
	if len(b) < HeaderLen || [4]byte(b[0:4]) != magic {
		return header{}, false
	}
	h := header{kind: b[4], flow: binary.BigEndian.Uint32(b[8:12]), seq: binary.BigEndian.Uint64(b[16:24]), sent: int64(binary.BigEndian.Uint64(b[24:32])),
		token: binary.BigEndian.Uint64(b[32:40])}
	if h.kind != kindData && h.kind != kindEnd {
		return header{}, false
	}
	return h, true
}

// SendConfig is one flow.
type SendConfig struct {
	Flow uint32
	// ToS is the IP ToS byte (DSCP<<2 | ECN), set with IP_TOS.
	ToS int
	// Size is the UDP payload size in bytes (MinSize..MaxSize).
	Size int
	// Count is the number of data packets.
	Count int
	// Rate is packets per second; 0 = as fast as the socket takes them.
	Rate float64
	// Token is the run's token (NewToken), carried by every packet.
	Token uint64
}

// SendStats is what a sender did.
type SendStats struct {
	Flow    uint32        `json:"flow"`
	Sent    uint64        `json:"sent"`
	Errors  uint64        `json:"errors"` // send calls that failed (ENOBUFS ...)
	Bytes   uint64        `json:"bytes"`
	Elapsed time.Duration `json:"elapsedNs"`
}

// Check validates the flow.
func (c SendConfig) Check() error {
	switch {
	case c.ToS < 0 || c.ToS > 255:
		return fmt.Errorf("udp flow %d: tos %d out of range 0-255", c.Flow, c.ToS)
	case c.Size < MinSize || c.Size > MaxSize:
		return fmt.Errorf("udp flow %d: size %d out of range %d-%d", c.Flow, c.Size, MinSize, MaxSize)
	case c.Count < 1:
		return fmt.Errorf("udp flow %d: count %d: want at least 1 packet", c.Flow, c.Count)
	case c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0):
		return fmt.Errorf("udp flow %d: rate %v packets/s is not a positive number", c.Flow, c.Rate)
	}
	return nil
}

// Dial opens a UDP socket to dst with the IP ToS byte set (IP_TOS for IPv4,
// IPV6_TCLASS for IPv6). Call it inside the sender's network namespace; the
// socket stays there.
func Dial(dst netip.AddrPort, tos int) (*net.UDPConn, error) {
	if tos < 0 || tos > 255 {
		return nil, fmt.Errorf("udp dial %s: tos %d out of range 0-255", dst, tos)
	}
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(dst))
	if err != nil {
		return nil, fmt.Errorf("udp dial %s: %w", dst, err)
	}
	if err := setTOS(c, dst.Addr().Is4() || dst.Addr().Is4In6(), tos); err != nil {
		c.Close()
		return nil, fmt.Errorf("udp dial %s: set tos %d: %w", dst, tos, err)
	}
	_ = c.SetWriteBuffer(1 << 20)
	return c, nil
}

func setTOS(c *net.UDPConn, v4 bool, tos int) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		if v4 {
			serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_TOS, tos)
		} else {
			serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IPV6, syscall.IPV6_TCLASS, tos)
		}
	})
	if err != nil {
		return err
	}
	return serr
}

// Send sends cfg.Count data packets on c, paced at cfg.Rate, then end
// markers that tell the receiver the count. It stops early when ctx ends.
func Send(ctx context.Context, c *net.UDPConn, cfg SendConfig) (SendStats, error) {
	st := SendStats{Flow: cfg.Flow}
	if err := cfg.Check(); err != nil {
		return st, err
	}
	buf := make([]byte, cfg.Size)
	for i := HeaderLen; i < len(buf); i++ {
		buf[i] = byte(i)
	}
	start := time.Now()
	var interval time.Duration
	if cfg.Rate > 0 {
		interval = time.Duration(float64(time.Second) / cfg.Rate)
	}
	for i := 0; i < cfg.Count; i++ {
		if i%64 == 0 && ctx.Err() != nil {
			break
		}
		if interval > 0 {
			due := start.Add(time.Duration(i) * interval)
			if d := time.Until(due); d > 200*time.Microsecond {
				select {
				case <-time.After(d):
				case <-ctx.Done():
				}
			}
		}
		header{kind: kindData, flow: cfg.Flow, seq: uint64(i), sent: time.Now().UnixNano(), token: cfg.Token}.put(buf)
		if _, err := c.Write(buf); err != nil {
			st.Errors++
			continue
		}
		st.Sent++
		st.Bytes += uint64(len(buf))
	}
	st.Elapsed = time.Since(start)
	// End markers carry the number of data packets sent; repeated because
	// they cross the same lossy path.
	end := make([]byte, HeaderLen)
	header{kind: kindEnd, flow: cfg.Flow, seq: st.Sent, sent: time.Now().UnixNano(), token: cfg.Token}.put(end)
	for k := 0; k < 5; k++ {
		_, _ = c.Write(end)
		time.Sleep(2 * time.Millisecond)
	}
	if err := ctx.Err(); err != nil {
		return st, fmt.Errorf("udp flow %d: %w", cfg.Flow, err)
	}
	return st, nil
}

// FlowStats is what arrived of one flow.
type FlowStats struct {
	Flow uint32 `json:"flow"`
	// Source is the sender's address as seen by the receiver.
	Source string `json:"source"`
	// Sent is the sender's count from its end marker (0 if none arrived).
	Sent     uint64 `json:"sent"`
	EndSeen  bool   `json:"endSeen"`
	Received uint64 `json:"received"` // data packets, duplicates included
	Unique   uint64 `json:"unique"`
	// Lost = Sent - Unique when the end marker arrived.
	Lost       uint64 `json:"lost"`
	Duplicates uint64 `json:"duplicates"`
	// Reordered counts packets that arrived after a higher sequence number.
	Reordered uint64 `json:"reordered"`
	// SocketDrops is what the receiving socket itself dropped (buffer full:
	// the receiver host, not the network), per SO_RXQ_OVFL; one receiver
	// socket per flow.
	SocketDrops uint64 `json:"socketDrops"`
	Bytes       uint64 `json:"bytes"`
	// ToS counts received packets by the ToS byte they arrived with.
	ToS map[uint8]uint64 `json:"tos"`
	// Rejected is how many packets the receiver dropped as not the run's
	// (wrong token, source, flow id or sequence; over its state caps),
	// over all flows of the receiver.
	Rejected uint64 `json:"rejected,omitempty"`
	// Throughput over first to last arrival, Gb/s of UDP payload.
	Gbps float64 `json:"gbps"`
	// One-way latency (receive time - send timestamp).
	P50  time.Duration `json:"p50Ns"`
	P99  time.Duration `json:"p99Ns"`
	P999 time.Duration `json:"p999Ns"`
	Max  time.Duration `json:"maxNs"`

	first, last time.Time
	seen        map[uint64]struct{}
	maxSeq      uint64
	any         bool
	lat         []int64
}

// recvBuffer is the receive buffer a receiver asks for.
const recvBuffer = 16 << 20

// maxSamples caps the latency samples kept per flow.
const maxSamples = 1 << 20

// The receiver's state caps when its Filter does not bound it: flows it
// keeps, and the highest sequence number it records.
const (
	maxFlows = 64
	maxSeq   = 1 << 22
)

// Filter is what a receiver accepts: packets carrying the run's token,
// from one of the senders' addresses, of the flows it waits for, with a
// sequence number below the flow's packet count. Anything else (a forged
// flow or end marker from elsewhere on the network) is counted in
// FlowStats.Rejected and leaves no state.
type Filter struct {
	// Token must be in every packet (0: no token is checked).
	Token uint64
	// Sources are the senders' addresses (none: any).
	Sources []netip.Addr
	// Flows are the flow ids accepted (none: any, up to 64 flows).
	Flows []uint32
	// Packets bounds a data packet's sequence number (0: 4,194,304).
	Packets uint64
}

// NewToken returns a random per-run token (never 0).
func NewToken() (uint64, error) {
	var b [8]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			return 0, err
		}
		if t := binary.BigEndian.Uint64(b[:]); t != 0 {
			return t, nil
		}
	}
}

// Receiver counts packets arriving on one socket.
type Receiver struct {
	conn *net.UDPConn
	mu   sync.Mutex
	// overflow is the socket's drop counter (SO_RXQ_OVFL) as last reported.
	overflow uint32
	// flows by id
	flows    map[uint32]*FlowStats
	filter   Filter
	rejected uint64
}

// SetFilter sets what the receiver accepts; call it before Run.
func (r *Receiver) SetFilter(f Filter) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f.Sources = slices.Clone(f.Sources)
	for i, a := range f.Sources {
		f.Sources[i] = a.Unmap()
	}
	r.filter = f
}

// accept says whether a packet is the run's (r.mu held).
func (r *Receiver) accept(h header, src netip.AddrPort) bool {
	f := r.filter
	if h.token != f.Token {
		return false
	}
	if len(f.Sources) > 0 && !slices.Contains(f.Sources, src.Addr().Unmap()) {
		return false
	}
	if len(f.Flows) > 0 {
		if !slices.Contains(f.Flows, h.flow) {
			return false
		}
	} else if r.flows[h.flow] == nil && len(r.flows) >= maxFlows {
		return false
	}
	limit := cmp.Or(f.Packets, maxSeq)
	if h.kind == kindData && h.seq >= limit || h.kind == kindEnd && h.seq > limit {
		return false
	}
	return true
}

// Listen opens the receiving socket on addr with IP_RECVTOS, so the ToS byte
// of every packet is seen. Call it inside the receiver's network namespace.
func Listen(addr netip.AddrPort) (*Receiver, error) {
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(addr))
	if err != nil {
		return nil, fmt.Errorf("udp listen %s: %w", addr, err)
	}
	rc, err := c.SyscallConn()
	if err == nil {
		var serr error
		err = rc.Control(func(fd uintptr) {
			// A big receive buffer, past net.core.rmem_max when we may
			// (CAP_NET_ADMIN), so a briefly descheduled receiver does not
			// drop; SO_RXQ_OVFL reports what the socket still dropped.
			if syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUFFORCE, recvBuffer) != nil {
				_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, recvBuffer)
			}
			_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RXQ_OVFL, 1)
			if addr.Addr().Is4() || addr.Addr().IsUnspecified() {
				serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_RECVTOS, 1)
			} else {
				serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IPV6, syscall.IPV6_RECVTCLASS, 1)
			}
		})
		if err == nil {
			err = serr
		}
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("udp listen %s: enable IP_RECVTOS: %w", addr, err)
	}
	return &Receiver{conn: c, flows: map[uint32]*FlowStats{}}, nil
}

// Addr is the local address the receiver listens on.
func (r *Receiver) Addr() netip.AddrPort {
	return r.conn.LocalAddr().(*net.UDPAddr).AddrPort()
}

// Close closes the socket.
func (r *Receiver) Close() error { return r.conn.Close() }

// Run reads packets until ctx ends, every flow of expect has delivered its
// end marker (expect may be nil: then only ctx and idle end it), or nothing
// arrived for idle after the first packet. Idle is judged on an empty
// socket only: packets that queued while the receiver was not scheduled are
// read first. So is the end of ctx: the packets already in the socket when
// it ends are read and counted before Run returns (a receiver descheduled
// past its caller's deadline on a loaded machine counted none of them and
// called them lost). It returns the flows sorted by id.
func (r *Receiver) Run(ctx context.Context, expect []uint32, idle time.Duration) ([]FlowStats, error) {
	buf := make([]byte, MaxSize+HeaderLen)
	oob := make([]byte, 256)
	if idle <= 0 {
		idle = 2 * time.Second
	}
	lastArrival := time.Time{}
	draining := false
	for {
		if !draining && ctx.Err() != nil {
			// Read what is queued, without waiting for more.
			draining = true
		}
		if len(expect) > 0 && r.allEnded(expect) {
			break
		}
		if draining {
			if !r.readQueued(buf, oob) {
				break // the socket is empty, or closed
			}
			continue
		}
		_ = r.conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		n, oobn, _, src, err := r.conn.ReadMsgUDPAddrPort(buf, oob)
		now := time.Now()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// The socket is empty: only now does the time since the
				// last arrival say the sender went quiet.
				if !lastArrival.IsZero() && now.Sub(lastArrival) > idle {
					break
				}
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				break
			}
			return r.Stats(), fmt.Errorf("udp receive on %s: %w", r.Addr(), err)
		}
		h, ok := parseHeader(buf[:n])
		if !ok {
			continue
		}
		lastArrival = now
		tos, ovfl := control(oob[:oobn])
		r.record(h, n, tos, ovfl, src, now)
	}
	return r.Stats(), nil
}

// readQueued reads and records one packet already queued in the socket,
// without waiting (recvmsg with MSG_DONTWAIT: a read deadline in the past
// would not even try). It reports false when nothing is queued.
func (r *Receiver) readQueued(buf, oob []byte) bool {
	rc, err := r.conn.SyscallConn()
	if err != nil {
		return false
	}
	var n, oobn int
	var from syscall.Sockaddr
	var rerr error
	if err := rc.Read(func(fd uintptr) bool {
		n, oobn, _, from, rerr = syscall.Recvmsg(int(fd), buf, oob, syscall.MSG_DONTWAIT)
		return true // never wait for more
	}); err != nil || rerr != nil {
		return false
	}
	var src netip.AddrPort
	switch sa := from.(type) {
	case *syscall.SockaddrInet4:
		src = netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(sa.Port))
	case *syscall.SockaddrInet6:
		src = netip.AddrPortFrom(netip.AddrFrom16(sa.Addr).Unmap(), uint16(sa.Port))
	}
	if h, ok := parseHeader(buf[:n]); ok {
		tos, ovfl := control(oob[:oobn])
		r.record(h, n, tos, ovfl, src, time.Now())
	}
	return true
}

func (r *Receiver) allEnded(expect []uint32) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range expect {
		f := r.flows[id]
		if f == nil || !f.EndSeen {
			return false
		}
	}
	return true
}

func (r *Receiver) record(h header, n int, tos int, ovfl uint32, src netip.AddrPort, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.overflow = max(r.overflow, ovfl)
	if !r.accept(h, src) {
		r.rejected++
		return
	}
	f := r.flows[h.flow]
	if f == nil {
		f = &FlowStats{Flow: h.flow, Source: src.Addr().String(), ToS: map[uint8]uint64{}, seen: map[uint64]struct{}{}}
		r.flows[h.flow] = f
	}
	if h.kind == kindEnd {
		f.EndSeen, f.Sent = true, h.seq
		return
	}
	f.Received++
	f.Bytes += uint64(n)
	if tos >= 0 {
		f.ToS[uint8(tos)]++
	}
	if _, dup := f.seen[h.seq]; dup {
		f.Duplicates++
		return
	}
	f.seen[h.seq] = struct{}{}
	f.Unique++
	if f.any && h.seq < f.maxSeq {
		f.Reordered++
	}
	if !f.any || h.seq > f.maxSeq {
		f.maxSeq = h.seq
	}
	f.any = true
	if f.first.IsZero() {
		f.first = now
	}
	f.last = now
	if len(f.lat) < maxSamples {
		f.lat = append(f.lat, now.UnixNano()-h.sent)
	}
}

// control returns the ToS byte (IP_TOS / IPV6_TCLASS, -1 if absent) and the
// socket's cumulative drop count (SO_RXQ_OVFL, 0 if absent) from a packet's
// control messages.
func control(oob []byte) (tos int, ovfl uint32) {
	tos = -1
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return tos, 0
	}
	for _, m := range msgs {
		switch {
		case m.Header.Level == syscall.IPPROTO_IP && m.Header.Type == syscall.IP_TOS && len(m.Data) >= 1:
			tos = int(m.Data[0])
		case m.Header.Level == syscall.IPPROTO_IPV6 && m.Header.Type == syscall.IPV6_TCLASS && len(m.Data) >= 4:
			tos = int(binary.NativeEndian.Uint32(m.Data[:4]))
		case m.Header.Level == syscall.SOL_SOCKET && m.Header.Type == syscall.SO_RXQ_OVFL && len(m.Data) >= 4:
			ovfl = binary.NativeEndian.Uint32(m.Data[:4])
		}
	}
	return tos, ovfl
}

// Stats returns a snapshot of every flow, sorted by id, with loss,
// throughput and percentiles computed.
func (r *Receiver) Stats() []FlowStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]FlowStats, 0, len(r.flows))
	for _, f := range r.flows {
		s := *f
		s.ToS = make(map[uint8]uint64, len(f.ToS))
		for k, v := range f.ToS {
			s.ToS[k] = v
		}
		if s.EndSeen && s.Sent > s.Unique {
			s.Lost = s.Sent - s.Unique
		}
		s.SocketDrops = uint64(r.overflow)
		s.Rejected = r.rejected
		if d := f.last.Sub(f.first); d > 0 && s.Unique > 1 {
			s.Gbps = float64(s.Bytes) * 8 / d.Seconds() / 1e9
		}
		lat := slices.Clone(f.lat)
		slices.Sort(lat)
		s.P50, s.P99, s.P999 = pct(lat, 0.50), pct(lat, 0.99), pct(lat, 0.999)
		if len(lat) > 0 {
			s.Max = time.Duration(lat[len(lat)-1])
		}
		s.seen, s.lat = nil, nil
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b FlowStats) int { return cmp.Compare(a.Flow, b.Flow) })
	return out
}

// pct is the nearest-rank percentile of sorted samples.
func pct(sorted []int64, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	k := int(math.Ceil(p*float64(len(sorted)))) - 1
	k = max(0, min(k, len(sorted)-1))
	return time.Duration(sorted[k])
}
