// Package labctl is the control socket of a kept lab (`fabricctl lab
// --keep`): control.sock in the lab directory, through which another
// process plays traffic into the lab's twins' counters (`fabricctl lab
// traffic`, `validate --engine sim`).
//
// The socket is a Unix stream socket, mode 0600 in the lab directory
// (0700), like the lab's other files: only the lab's owner reaches it, and
// on Linux the server also refuses a peer of another user (SO_PEERCRED).
// One JSON request per line, one JSON response per line:
//
//	{"op":"play","plays":[{"switch":"leaf1","port":"Ethernet0","priority":3,"traffic":{...}}]}
//	{"op":"rate","plays":[...],"tickMs":100}   replaces the running rates (per second)
//	{"op":"stop"}                               stops every running rate
//	-> {"ok":true} or {"error":"..."}
//
// A play adds to the counters of the switch port and priority in the
// platform's own paths and units (twin.Twin.Play); a rate plays per-second
// traffic continuously (twin.Twin.Rate) so that watch sees moving
// counters.
package labctl

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/fabricctl/fabricctl/internal/sim"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// SocketName is the control socket's file name in the lab directory.
const SocketName = "control.sock"

// maxSocketPath is the longest socket path everywhere (BSD sun_path 104
// bytes with its terminating NUL; Linux takes 108).
const maxSocketPath = 104

// Play is traffic through one switch port and priority, as its counters
// count it.
type Play struct {
	Switch   string       `json:"switch"`
	Port     string       `json:"port"`
	Priority int          `json:"priority"`
	Traffic  twin.Traffic `json:"traffic"`
}

// FromResult maps a simulator run onto the switches' counters: one Play
// per switch port and priority the run counted anything on (hosts are
// not switches: their rows are left out). TxFrames -> Packets, Drops ->
// Drops, ECNMarks -> ECNMarked, PauseSent -> PauseTx, PauseRecv ->
// PauseRx, WatchdogTriggers -> Storms. Pause frames are the XOFF frames a
// port sent or received (refreshes included, XON frames not: the
// platforms' PFC counters count pause frames of the priority, and an XON
// is a pause frame with quanta 0 that some count and some do not; the
// simulator counts them apart as ResumeSent/ResumeRecv).
func FromResult(res *sim.Result) []Play {
	var out []Play
	for _, p := range res.Ports {
		if p.Host {
			continue
		}
		tr := twin.Traffic{Packets: u(p.TxFrames), Drops: u(p.Drops), ECNMarked: u(p.ECNMarks),
			PauseTx: u(p.PauseSent), PauseRx: u(p.PauseRecv), Storms: u(p.WatchdogTriggers)}
		if tr == (twin.Traffic{}) {
			continue
		}
		out = append(out, Play{Switch: p.Node, Port: p.Port, Priority: p.Priority, Traffic: tr})
	}
	return out
}

func u(n int64) uint64 { return uint64(max(n, 0)) }

// PerSecond scales plays counted over a run of d to per-second rates
// (rounded up, so that anything the run counted moves), for a rate.
func PerSecond(plays []Play, d time.Duration) []Play {
	if d <= 0 {
		return nil
	}
	f := float64(time.Second) / float64(d)
	sc := func(n uint64) uint64 {
		if n == 0 {
			return 0
		}
		return uint64(float64(n)*f + 0.999999)
	}
	out := make([]Play, len(plays))
	for i, p := range plays {
		t := p.Traffic
		p.Traffic = twin.Traffic{Packets: sc(t.Packets), Drops: sc(t.Drops), ECNMarked: sc(t.ECNMarked),
			PauseTx: sc(t.PauseTx), PauseRx: sc(t.PauseRx), Storms: sc(t.Storms)}
		out[i] = p
	}
	return out
}

// Lab is the twins of a lab by switch name, and the rates running on them.
type Lab struct {
	twins map[string]*twin.Twin
	mu    sync.Mutex
	stops []func()
}

// NewLab serves the twins.
func NewLab(twins []*twin.Twin) *Lab {
	m := make(map[string]*twin.Twin, len(twins))
	for _, t := range twins {
		m[t.Name()] = t
	}
	return &Lab{twins: m}
}

// check verifies every play names a twin before any is played: a request
// is played whole or not at all.
func (l *Lab) check(plays []Play) error {
	for _, p := range plays {
		if l.twins[p.Switch] == nil {
			names := make([]string, 0, len(l.twins))
			for n := range l.twins {
				names = append(names, n)
			}
			sort.Strings(names)
			return fmt.Errorf("switch %q is not a twin of this lab (it has %v)", p.Switch, names)
		}
		if p.Priority < 0 || p.Priority > 7 {
			return fmt.Errorf("%s %s: priority %d is not 0-7", p.Switch, p.Port, p.Priority)
		}
	}
	return nil
}

// Play adds plays to the twins' counters.
func (l *Lab) Play(plays []Play) error {
	if err := l.check(plays); err != nil {
		return err
	}
	for _, p := range plays {
		if err := l.twins[p.Switch].Play(p.Port, p.Priority, p.Traffic); err != nil {
			return err
		}
	}
	return nil
}

// Rate replaces the running rates by perSecond (each play per second,
// counted every tick; nil stops them all).
func (l *Lab) Rate(perSecond []Play, tick time.Duration) error {
	if err := l.check(perSecond); err != nil {
		return err
	}
	l.Stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range perSecond {
		stop, err := l.twins[p.Switch].Rate(p.Port, p.Priority, p.Traffic, tick)
		if err != nil {
			for _, s := range l.stops {
				s()
			}
			l.stops = nil
			return err
		}
		l.stops = append(l.stops, stop)
	}
	return nil
}

// Stop stops every running rate.
func (l *Lab) Stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.stops {
		s()
	}
	l.stops = nil
}

// request and response are the socket's lines.
type request struct {
	Op     string `json:"op"`
	Plays  []Play `json:"plays,omitempty"`
	TickMS int    `json:"tickMs,omitempty"`
}

type response struct {
	OK    bool   `json:"ok,omitempty"`
	Error string `json:"error,omitempty"`
}

// Server serves a Lab on the lab directory's control socket.
type Server struct {
	lab  *Lab
	ln   net.Listener
	path string
	wg   sync.WaitGroup
	mu   sync.Mutex
	cs   map[net.Conn]bool
	done bool
}

// Serve listens on labDir/control.sock (mode 0600) and serves lab until
// Close. A socket file left by a lab that is gone is replaced; one a
// running lab answers on is an error.
func Serve(labDir string, lab *Lab) (*Server, error) {
	path := filepath.Join(labDir, SocketName)
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		return nil, fmt.Errorf("lab control socket %s: another lab serves it", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("lab control socket: %w", err)
	}
	// sun_path holds 108 bytes on Linux (unix(7)), 104 on the BSDs.
	if len(path) >= maxSocketPath {
		return nil, fmt.Errorf("lab control socket %s: the path is %d bytes, more than a Unix socket address holds (%d): use a shorter lab directory", path, len(path), maxSocketPath-1)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("lab control socket: %w", err)
	}
	// The lab directory is 0700 already; the socket is 0600 as the
	// directory's other files.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("lab control socket: %w", err)
	}
	s := &Server{lab: lab, ln: ln, path: path, cs: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Path is the socket's path.
func (s *Server) Path() string { return s.path }

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		if err := peerIsOwner(c); err != nil {
			_ = json.NewEncoder(c).Encode(response{Error: err.Error()})
			c.Close()
			continue
		}
		s.mu.Lock()
		if s.done {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.cs[c] = true
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(c)
	}
}

func (s *Server) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.cs, c)
		s.mu.Unlock()
		c.Close()
	}()
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	enc := json.NewEncoder(c)
	for sc.Scan() {
		var req request
		var err error
		if err = json.Unmarshal(sc.Bytes(), &req); err == nil {
			err = s.do(req)
		}
		resp := response{OK: err == nil}
		if err != nil {
			resp.Error = err.Error()
		}
		if enc.Encode(resp) != nil {
			return
		}
	}
}

func (s *Server) do(req request) error {
	switch req.Op {
	case "play":
		return s.lab.Play(req.Plays)
	case "rate":
		tick := time.Duration(req.TickMS) * time.Millisecond
		return s.lab.Rate(req.Plays, tick)
	case "stop":
		s.lab.Stop()
		return nil
	}
	return fmt.Errorf("unknown op %q (want play, rate or stop)", req.Op)
}

// Close stops serving, closes every connection and removes the socket.
func (s *Server) Close() error {
	s.mu.Lock()
	s.done = true
	for c := range s.cs {
		c.Close()
	}
	s.mu.Unlock()
	err := s.ln.Close()
	s.wg.Wait()
	_ = os.Remove(s.path)
	return err
}

// Client talks to a kept lab's control socket.
type Client struct {
	c  net.Conn
	sc *bufio.Scanner
	mu sync.Mutex
}

// Dial connects to the control socket of the lab in labDir.
func Dial(labDir string) (*Client, error) {
	path := filepath.Join(labDir, SocketName)
	c, err := net.Dial("unix", path)
	if err != nil {
		return nil, fmt.Errorf("lab %s: no running lab answers on %s (start one with `fabricctl lab -f INTENT --keep --dir %s`): %w", labDir, path, labDir, err)
	}
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	return &Client{c: c, sc: sc}, nil
}

func (c *Client) call(ctx context.Context, req request) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.c.SetDeadline(dl)
	} else {
		_ = c.c.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { _ = c.c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := c.c.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("lab control socket: %w", errors.Join(ctx.Err(), err))
	}
	if !c.sc.Scan() {
		err := c.sc.Err()
		if err == nil {
			err = errors.New("the lab closed the connection")
		}
		return fmt.Errorf("lab control socket: %w", errors.Join(ctx.Err(), err))
	}
	var resp response
	if err := json.Unmarshal(c.sc.Bytes(), &resp); err != nil {
		return fmt.Errorf("lab control socket: answer %q: %w", c.sc.Text(), err)
	}
	if resp.Error != "" {
		return fmt.Errorf("lab: %s", resp.Error)
	}
	return nil
}

// Play adds plays to the lab's twins' counters (all or none).
func (c *Client) Play(ctx context.Context, plays []Play) error {
	return c.call(ctx, request{Op: "play", Plays: plays})
}

// Rate replaces the lab's running rates by perSecond, counted every tick
// (0: the twins' default).
func (c *Client) Rate(ctx context.Context, perSecond []Play, tick time.Duration) error {
	return c.call(ctx, request{Op: "rate", Plays: perSecond, TickMS: int(tick / time.Millisecond)})
}

// Stop stops the lab's running rates.
func (c *Client) Stop(ctx context.Context) error { return c.call(ctx, request{Op: "stop"}) }

// Close closes the connection.
func (c *Client) Close() error { return c.c.Close() }
