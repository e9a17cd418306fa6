package sim

// Time is simulated time in picoseconds: one byte at 800 Gb/s is 10 ps, so
// every supported line rate has an exact integer byte time, and an int64
// holds about 106 days.
type Time int64

// Time units.
const (
	Picosecond  Time = 1
	Nanosecond  Time = 1000
	Microsecond Time = 1000 * Nanosecond
	Millisecond Time = 1000 * Microsecond
)

// Seconds returns t in seconds.
func (t Time) Seconds() float64 { return float64(t) / 1e12 }

type evKind uint8

const (
	evTxDone       evKind = iota // a port finished serialising a frame
	evArrive                     // a frame's last bit reached the far end of a link
	evWake                       // a port re-runs its scheduler (pause ended, pacing)
	evFlowStart                  // a flow starts sending
	evRPTimer                    // DCQCN rate-increase timer of a flow
	evPauseRefresh               // re-send XOFF while a priority group stays above XOFF
	evPoll                       // PFC watchdog poll of every switch port
	evSample                     // statistics sample for the plots and deadlock detection
	evDrain                      // a slow receiver drained one frame
	evRetxTimer                  // a QP's local ACK timer (recovery.go)
)

// event is one scheduled action. Events are kept by value in a binary heap
// ordered by (t, seq): seq makes runs deterministic for a seed.
type event struct {
	t    Time
	seq  uint64
	kind evKind
	prio int8
	gen  uint32
	p    *port
	pkt  *packet
	f    *flow
}

// eventQueue is a binary min-heap of events. It is hand-written rather than
// container/heap so that pushing and popping never boxes an event in an
// interface (no allocation per event).
type eventQueue struct {
	h   []event
	seq uint64
}

func (q *eventQueue) less(i, j int) bool {
	a, b := &q.h[i], &q.h[j]
	return a.t < b.t || a.t == b.t && a.seq < b.seq
}

func (q *eventQueue) push(e event) {
	q.seq++
	e.seq = q.seq
	q.h = append(q.h, e)
	i := len(q.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

func (q *eventQueue) pop() event {
	e := q.h[0]
	n := len(q.h) - 1
	q.h[0] = q.h[n]
	q.h[n] = event{}
	q.h = q.h[:n]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && q.less(l, m) {
			m = l
		}
		if r < n && q.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
	return e
}

func (q *eventQueue) len() int { return len(q.h) }
