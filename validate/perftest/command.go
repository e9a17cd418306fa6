package perftest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Tools are the perftest binaries fabricctl runs.
var tools = map[string]Kind{
	"ib_write_bw": Bandwidth, "ib_send_bw": Bandwidth, "ib_read_bw": Bandwidth, "ib_atomic_bw": Bandwidth,
	"ib_write_lat": Latency, "ib_send_lat": Latency, "ib_read_lat": Latency, "ib_atomic_lat": Latency,
}

// ToolKind returns what tool measures, or false for an unknown tool.
func ToolKind(tool string) (Kind, bool) {
	k, ok := tools[tool]
	return k, ok
}

// Spec is one perftest test. Both ends run the same options; only the
// device end (-d -i -x) and the server address differ.
type Spec struct {
	// Tool is the perftest binary: ib_write_bw, ib_write_lat, ib_send_bw ...
	Tool string
	// Size is the message size in bytes (-s); 0 = perftest's default.
	Size int64
	// Duration runs a timed test (-D, whole seconds); meant for bandwidth.
	Duration time.Duration
	// Iterations is the exchange count (-n); latency percentiles need it.
	Iterations int
	// QPs is the number of queue pairs (-q); 0 = 1.
	QPs int
	// ToS is the IP ToS byte of the RDMA traffic (DSCP<<2 | ECN); -1 = unset.
	ToS int
	// RDMACM connects with rdma_cm (-R) and sets the ToS with -T; without it
	// the ToS goes into the GRH traffic class (--tclass). perftest rejects -T
	// without -R ("TOS only valid for rdma_cm based QP", exit 1).
	RDMACM bool
	// CPUUtil adds --cpu_util (perftest honours it in duration mode only).
	CPUUtil bool
}

// End is one side's RDMA device.
type End struct {
	Device   string // -d, the ib device (mlx5_0)
	Port     int    // -i, the ib port (1-based)
	GIDIndex int    // -x, the RoCE v2 GID index of the netdev's IPv4 address
}

var devRe = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

func (e End) check() error {
	if !devRe.MatchString(e.Device) {
		return fmt.Errorf("rdma device %q is not a valid ib device name", e.Device)
	}
	if e.Port < 1 || e.Port > 255 {
		return fmt.Errorf("rdma device %s: port %d out of range 1-255", e.Device, e.Port)
	}
	if e.GIDIndex < 0 || e.GIDIndex > 255 {
		return fmt.Errorf("rdma device %s: gid index %d out of range 0-255", e.Device, e.GIDIndex)
	}
	return nil
}

// Check validates the spec.
func (s Spec) Check() error {
	if _, ok := tools[s.Tool]; !ok {
		return fmt.Errorf("perftest tool %q is not one of ib_{write,send,read,atomic}_{bw,lat}", s.Tool)
	}
	switch {
	case s.Size < 0:
		return fmt.Errorf("%s: message size %d is negative", s.Tool, s.Size)
	case s.Duration < 0 || (s.Duration > 0 && s.Duration < time.Second):
		return fmt.Errorf("%s: duration %v: perftest runs whole seconds (at least 1s)", s.Tool, s.Duration)
	case s.Duration > 0 && s.Iterations > 0:
		return fmt.Errorf("%s: duration and iterations are exclusive", s.Tool)
	case s.Iterations != 0 && (s.Iterations < 5 || s.Iterations > 100000000):
		return fmt.Errorf("%s: iterations %d out of perftest's range 5-100000000", s.Tool, s.Iterations)
	case s.QPs < 0 || s.QPs > 16384:
		return fmt.Errorf("%s: qps %d out of range 1-16384", s.Tool, s.QPs)
	case s.ToS < -1 || s.ToS > 255:
		return fmt.Errorf("%s: tos %d out of range 0-255", s.Tool, s.ToS)
	case s.CPUUtil && s.Duration == 0:
		// perftest: "CPU Utilization works only with Duration mode."
		return fmt.Errorf("%s: --cpu_util needs a duration (-D)", s.Tool)
	}
	return nil
}

// Argv returns the command line of one side. server is the address the
// client connects to; "" builds the server side. tcpPort is perftest's TCP
// control port (-p), distinct for every pair that runs at the same time.
//
// The flags that decide what is measured are always explicit:
// -d <ibdev> -i <port> -x <gid> -F --report_gbits -p <port>, then the
// test's -s/-D/-n/-q and the ToS (-R -T <tos>, or --tclass <tos>).
func (s Spec) Argv(end End, tcpPort int, server string) ([]string, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	if err := end.check(); err != nil {
		return nil, err
	}
	if tcpPort < 1 || tcpPort > 65535 {
		return nil, fmt.Errorf("%s: tcp port %d out of range 1-65535", s.Tool, tcpPort)
	}
	if server != "" && (strings.HasPrefix(server, "-") || strings.ContainsAny(server, " \t\n")) {
		return nil, fmt.Errorf("%s: server address %q is not a host name or address", s.Tool, server)
	}
	a := []string{s.Tool,
		"-d", end.Device, "-i", strconv.Itoa(end.Port), "-x", strconv.Itoa(end.GIDIndex),
		"-F", "--report_gbits", "-p", strconv.Itoa(tcpPort)}
	if s.Size > 0 {
		a = append(a, "-s", strconv.FormatInt(s.Size, 10))
	}
	if s.Duration > 0 {
		a = append(a, "-D", strconv.Itoa(int(s.Duration/time.Second)))
	}
	if s.Iterations > 0 {
		a = append(a, "-n", strconv.Itoa(s.Iterations))
	}
	if s.QPs > 1 {
		a = append(a, "-q", strconv.Itoa(s.QPs))
	}
	switch {
	case s.RDMACM && s.ToS >= 0:
		a = append(a, "-R", "-T", strconv.Itoa(s.ToS))
	case s.RDMACM:
		a = append(a, "-R")
	case s.ToS >= 0:
		a = append(a, "--tclass", strconv.Itoa(s.ToS))
	}
	if s.CPUUtil {
		a = append(a, "--cpu_util")
	}
	if server != "" {
		a = append(a, server)
	}
	return a, nil
}
