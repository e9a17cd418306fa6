package validate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/fabricctl/fabricctl/internal/remote"
	"github.com/fabricctl/fabricctl/validate/udpflow"
)

// udpFlagError turns a flag parse error into the command's result: -h and
// --help print the flags and succeed, anything else is an error.
func udpFlagError(fs *flag.FlagSet, verb string, err error, stdout io.Writer) error {
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fmt.Fprintf(stdout, "Usage of fabricctl validate %s (run on hosts by fabricctl validate --engine udp):\n", verb)
		fs.PrintDefaults()
		return nil
	}
	return fmt.Errorf("%s: %w", verb, err)
}

// UDPCommand is `fabricctl validate udp-recv|udp-send ARGS`, the two halves
// of the UDP engine that RemoteUDPEngine starts on remote hosts.
//
//	udp-recv --listen IP:PORT --flow ID [--token HEX] [--from IP] [--count N] [--idle 1s] [--timeout 60s]
//	    prints "ready IP:PORT", then,
//	    when flow ID has ended (its end marker arrived, nothing arrived for
//	    --idle, or --timeout passed), one JSON line: the receiver's
//	    []udpflow.FlowStats. Only packets with the token, from --from, of
//	    flow ID and below --count are counted.
//	udp-send --to IP:PORT --flow ID --tos N --size N --count N --rate PPS [--token HEX]
//	    prints one JSON line: udpflow.SendStats
func UDPCommand(ctx context.Context, verb string, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("fabricctl validate "+verb, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	switch verb {
	case "udp-recv":
		listen := fs.String("listen", "", "address to listen on (IP:PORT)")
		flow := fs.Uint("flow", 1, "flow id to wait for")
		idle := fs.Duration("idle", time.Second, "end after this long without packets")
		timeout := fs.Duration("timeout", 60*time.Second, "end after this long in any case")
		token := fs.String("token", "", "the run's token (hex): packets without it are not counted")
		from := fs.String("from", "", "the sender's address: packets from elsewhere are not counted")
		count := fs.Uint64("count", 0, "the flow's packet count: higher sequence numbers are not counted (0: no bound but the receiver's cap)")
		if err := fs.Parse(args); err != nil {
			return udpFlagError(fs, verb, err, stdout)
		}
		ap, err := netip.ParseAddrPort(*listen)
		if err != nil {
			return fmt.Errorf("%s: --listen %q: %w", verb, *listen, err)
		}
		filter := udpflow.Filter{Flows: []uint32{uint32(*flow)}, Packets: *count}
		if filter.Token, err = parseToken(*token); err != nil {
			return fmt.Errorf("%s: --token: %w", verb, err)
		}
		if *from != "" {
			a, err := netip.ParseAddr(*from)
			if err != nil {
				return fmt.Errorf("%s: --from %q: %w", verb, *from, err)
			}
			filter.Sources = []netip.Addr{a}
		}
		r, err := udpflow.Listen(ap)
		if err != nil {
			return err
		}
		defer r.Close()
		r.SetFilter(filter)
		if _, err := fmt.Fprintf(stdout, "ready %s\n", r.Addr()); err != nil {
			return err
		}
		rctx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		st, err := r.Run(rctx, []uint32{uint32(*flow)}, *idle)
		if err != nil {
			return err
		}
		b, _ := json.Marshal(st)
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	case "udp-send":
		to := fs.String("to", "", "receiver address (IP:PORT)")
		flow := fs.Uint("flow", 1, "flow id")
		tos := fs.Int("tos", 0, "IP ToS byte")
		size := fs.Int("size", 1000, "UDP payload bytes")
		count := fs.Int("count", 1000, "packets")
		rate := fs.Float64("rate", 10000, "packets per second (0 = unpaced)")
		token := fs.String("token", "", "the run's token (hex), carried by every packet")
		if err := fs.Parse(args); err != nil {
			return udpFlagError(fs, verb, err, stdout)
		}
		tok, err := parseToken(*token)
		if err != nil {
			return fmt.Errorf("%s: --token: %w", verb, err)
		}
		ap, err := netip.ParseAddrPort(*to)
		if err != nil {
			return fmt.Errorf("%s: --to %q: %w", verb, *to, err)
		}
		c, err := udpflow.Dial(ap, *tos)
		if err != nil {
			return err
		}
		defer c.Close()
		st, err := udpflow.Send(ctx, c, udpflow.SendConfig{Flow: uint32(*flow), ToS: *tos, Size: *size, Count: *count, Rate: *rate, Token: tok})
		if err != nil {
			return err
		}
		b, _ := json.Marshal(st)
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	return fmt.Errorf("unknown udp verb %q: want udp-recv or udp-send", verb)
}

// parseToken reads a run token written as hex ("" is 0: no token).
func parseToken(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return 0, errors.New("want up to 16 hex digits")
	}
	return v, nil
}

// RemoteUDPEngine runs the UDP engine's receivers and senders as
// `fabricctl validate udp-recv|udp-send` processes on the hosts, through
// their runners (SSH, or local). fabricctl must be installed on the hosts.
type RemoteUDPEngine struct {
	Runner func(host string) (remote.Runner, error)
	// Fabricctl is the fabricctl command on the hosts (default "fabricctl").
	Fabricctl []string
	ToS       int
	Size      int
	Packets   int
	Rate      float64
	BasePort  int
	Idle      time.Duration
	// ReadyTimeout bounds the wait for a receiver to print "ready" (default 10s).
	ReadyTimeout time.Duration
}

var _ Engine = (*RemoteUDPEngine)(nil)

// Name implements Engine.
func (e *RemoteUDPEngine) Name() string { return "udp" }

// MeasuresLatency implements Engine.
func (e *RemoteUDPEngine) MeasuresLatency() bool { return true }

func (e *RemoteUDPEngine) argv(verb string, args ...string) []string {
	bin := e.Fabricctl
	if len(bin) == 0 {
		bin = []string{"fabricctl"}
	}
	return append(append(append([]string{}, bin...), "validate", verb), args...)
}

// lastJSON returns the last line of out that starts with '{' or '['.
func lastJSON(out []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		l := bytes.TrimSpace(lines[i])
		if len(l) > 0 && (l[0] == '{' || l[0] == '[') {
			return l
		}
	}
	return nil
}

// Run implements Engine.
func (e *RemoteUDPEngine) Run(ctx context.Context, kind string, flows []Flow) []FlowResult {
	u := newUDPSettings(e.Size, e.Packets, e.Rate, e.BasePort, e.Idle)
	size, packets, rate, base, idle, ready := u.size, u.packets, u.rate, u.base, u.idle, e.ReadyTimeout
	if ready == 0 {
		ready = 10 * time.Second
	}
	budget := u.flowTime() + 10*time.Second + ready
	// The receiver process cannot see its sender: it must not take the gap
	// between two paced packets for the end of the flow.
	idle = max(idle, u.gapIdle())
	out := make([]FlowResult, len(flows))
	procs := make([]remote.Process, len(flows))
	targets := make([]string, len(flows))
	defer func() {
		for _, p := range procs {
			if p != nil {
				_, _ = p.Stop()
			}
		}
	}()
	// The run's token, on the receivers' and senders' command lines (a
	// local user of those hosts can read it there; the network cannot).
	tok, err := udpflow.NewToken()
	if err != nil {
		for i, f := range flows {
			out[i] = newResult(f, e.ToS)
			out[i].Err = fmt.Sprintf("udp run token: %v", err)
		}
		return out
	}
	token := strconv.FormatUint(tok, 16)
	for i, f := range flows {
		out[i] = newResult(f, e.ToS)
		fail := func(err error) { out[i].Err = err.Error() }
		addr, err := netip.ParseAddr(f.Server.NIC.Address)
		if err != nil {
			fail(fmt.Errorf("host %s nic %s: address %q: the udp engine needs the NIC's IPv4 address", f.Server.Host, f.Server.NIC.Interface, f.Server.NIC.Address))
			continue
		}
		r, err := e.Runner(f.Server.Host)
		if err != nil {
			fail(err)
			continue
		}
		targets[i] = netip.AddrPortFrom(addr, uint16(base+i)).String()
		args := []string{"--listen", targets[i], "--flow", strconv.Itoa(i + 1), "--token", token, "--count", strconv.Itoa(packets),
			"--idle", idle.String(), "--timeout", budget.String()}
		if src, err := netip.ParseAddr(f.Client.NIC.Address); err == nil {
			args = append(args, "--from", src.String())
		}
		p, err := r.Start(ctx, e.argv("udp-recv", args...))
		if err != nil {
			fail(err)
			continue
		}
		procs[i] = p
	}
	// Wait until every receiver listens.
	deadline := time.Now().Add(ready)
	for i, p := range procs {
		for p != nil && out[i].Err == "" && !bytes.Contains(p.Output(), []byte("ready ")) {
			if time.Now().After(deadline) || ctx.Err() != nil {
				res, _ := p.Stop()
				out[i].Err = fmt.Sprintf("host %s: udp receiver did not start: %s", flows[i].Server.Host, bytes.TrimSpace(res.Stderr))
				procs[i] = nil
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	sent := make([]udpSendResult, len(flows))
	var wg sync.WaitGroup
	for i, f := range flows {
		if procs[i] == nil || out[i].Err != "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := e.Runner(f.Client.Host)
			if err == nil {
				var res remote.Result
				res, err = r.Run(ctx, e.argv("udp-send", "--to", targets[i], "--flow", strconv.Itoa(i+1), "--tos", strconv.Itoa(e.ToS),
					"--size", strconv.Itoa(size), "--count", strconv.Itoa(packets), "--rate", strconv.FormatFloat(rate, 'f', -1, 64), "--token", token), nil)
				if err == nil {
					err = json.Unmarshal(lastJSON(res.Stdout), &sent[i].st)
				}
			}
			sent[i].err = err
		}()
	}
	wg.Wait()
	for i, f := range flows {
		if procs[i] == nil || out[i].Err != "" {
			continue
		}
		if err := sent[i].err; err != nil {
			out[i].Err = fmt.Sprintf("host %s: udp sender: %v", f.Client.Host, err)
			continue
		}
		res, err := procs[i].Wait()
		procs[i] = nil
		var stats []udpflow.FlowStats
		if err == nil {
			err = json.Unmarshal(lastJSON(res.Stdout), &stats)
		}
		if err != nil {
			out[i].Err = fmt.Sprintf("host %s: udp receiver: %v", f.Server.Host, err)
			continue
		}
		fillUDP(&out[i], sent[i].st, stats, uint32(i+1), e.ToS)
	}
	return out
}

type udpSendResult struct {
	st  udpflow.SendStats
	err error
}
