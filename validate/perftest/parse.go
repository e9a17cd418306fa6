package perftest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Kind is what a perftest result table measures.
type Kind string

const (
	// Bandwidth: ib_*_bw tables (" #bytes #iterations BW peak[...] BW average[...] MsgRate[Mpps]").
	Bandwidth Kind = "bandwidth"
	// Latency: ib_*_lat tables in iteration mode (t_min ... 99.9% percentile).
	Latency Kind = "latency"
	// LatencyDuration: ib_*_lat -D tables (" #bytes #iterations t_avg[usec] tps average").
	LatencyDuration Kind = "latency-duration"
)

// Report is one parsed perftest text output. Units are normalised: bandwidth
// in Gb/s (10^9 bit/s), message rate in Mpps, latency in microseconds.
type Report struct {
	// Test is the title perftest prints, e.g. "RDMA_Write BW Test".
	Test string `json:"test,omitempty"`
	Kind Kind   `json:"kind"`
	// Unit is the bandwidth unit as printed ("Gb/sec", "MB/sec", "MiB/sec");
	// perftest's MB and MiB are both 2^20 bytes. Empty for latency tables.
	Unit string `json:"unit,omitempty"`
	// Info holds the "key : value" lines of the parameter block (Device,
	// GID index, Link type, Mtu, rdma_cm QPs, ...).
	Info map[string]string `json:"info,omitempty"`
	// Bandwidth rows (Kind == Bandwidth) or latency rows (the other kinds).
	Bandwidth []BWRow  `json:"bandwidth,omitempty"`
	Latency   []LatRow `json:"latency,omitempty"`
	// Warnings are lines perftest printed inside the table that are not rows
	// (e.g. "Conflicting CPU frequency values detected ...").
	Warnings []string `json:"warnings,omitempty"`
}

// BWRow is one row of a bandwidth table.
type BWRow struct {
	Bytes      int64 `json:"bytes"`
	Iterations int64 `json:"iterations"`
	// SL is the service level column of the QoS table variant (nil = absent).
	SL *int `json:"sl,omitempty"`
	// PeakGbps is 0 when perftest did not measure a peak (duration mode, -N).
	PeakGbps    float64 `json:"peakGbps"`
	AvgGbps     float64 `json:"avgGbps"`
	MsgRateMpps float64 `json:"msgRateMpps"`
	// AvgFromMsgRate: perftest printed the average as 0.00 (below its two
	// decimals: under 5 Mb/s with --report_gbits, as soft-RoCE on a loaded
	// emulated machine runs), and AvgGbps is its message rate times the
	// message size instead (see avgFromMsgRate).
	AvgFromMsgRate bool `json:"avgFromMsgRate,omitempty"`
	// CPUUtil is the --cpu_util column in percent (nil when absent).
	CPUUtil *float64 `json:"cpuUtilPercent,omitempty"`
}

// avgFromMsgRate is the average bandwidth in Gb/s that perftest's own
// message rate gives for messages of size bytes. perftest computes both
// columns from the same count and time (perftest_resources.c
// print_report_bw: bw_avg = factor*size*iters*cycles_to_units /
// (test_cycles*format_factor), msgRate_avg = iters*cycles_to_units*factor /
// (test_cycles*1e6), with format_factor 125,000,000 for Gb/s), so
// bw_avg = msgRate_avg * size * 8 / 1000; its MsgRate column has six
// decimals where BW average has two. TestBWAverageIsMsgRateTimesSize holds
// the relation on every result row in testdata, the public real runs
// included.
func avgFromMsgRate(msgRateMpps float64, size int64) float64 {
	return msgRateMpps * float64(size) * 8 / 1000
}

// LatRow is one row of a latency table. Fields a table variant does not
// print are nil.
type LatRow struct {
	Bytes       int64    `json:"bytes"`
	Iterations  int64    `json:"iterations"`
	MinUsec     *float64 `json:"minUsec,omitempty"`
	MaxUsec     *float64 `json:"maxUsec,omitempty"`
	TypicalUsec *float64 `json:"typicalUsec,omitempty"`
	AvgUsec     *float64 `json:"avgUsec,omitempty"`
	StdevUsec   *float64 `json:"stdevUsec,omitempty"`
	P99Usec     *float64 `json:"p99Usec,omitempty"`
	P999Usec    *float64 `json:"p999Usec,omitempty"`
	// TPS is the "tps average" of duration-mode latency tables.
	TPS     *float64 `json:"tps,omitempty"`
	CPUUtil *float64 `json:"cpuUtilPercent,omitempty"`
}

// ParseError is a perftest output that cannot be read. Line is 1-based; 0
// means the problem is the output as a whole (e.g. no table at all).
type ParseError struct {
	Name string // file name or "-" for stdin
	Line int
	Msg  string
	// Err is ErrNoTable when the output holds no result table at all.
	Err error
}

func (e *ParseError) Unwrap() error { return e.Err }

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.Name, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.Name, e.Line, e.Msg)
}

// ErrNoTable is wrapped by ParseError when the output holds no result table.
var ErrNoTable = errors.New("no perftest result table")

// column layout of one header.
type layout struct {
	kind    Kind
	unit    string // bandwidth unit as printed
	sl      bool   // QoS table: " #bytes #sl #iterations ..."
	perPort bool   // dual-port table: 4 more columns
	cpu     bool   // --cpu_util column
	latCols int    // latency value columns after #bytes #iterations
	line    int
}

// MB and MiB in perftest are both 0x100000 bytes (format_factor in
// perftest_parameters.c); Gb is 125,000,000 bytes (10^9 bit).
const mebibyteGbps = 1048576.0 * 8 / 1e9

const maxLine = 1 << 20

// Parse reads perftest's text output (stdout of ib_write_bw, ib_send_lat ...)
// and returns its result table. name is used in errors only. Lines that are
// not part of the table (banners, addresses, GIDs) are skipped; lines that
// appear inside the table and are not rows are kept as warnings. A table that
// is not closed by perftest's dashed line is reported as truncated.
func Parse(name string, r io.Reader) (*Report, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	rep := &Report{}
	var (
		cur      *layout // header of the table being read; nil outside a table
		kind     *layout // first header seen
		lineNo   int
		closed   bool // a dashed line ended the last table
		lastText string
	)
	for sc.Scan() {
		lineNo++
		raw := sc.Text()
		line := strings.TrimSpace(raw)
		if line == "" {
			continue
		}
		lastText = line
		if isDashLine(line) {
			if cur != nil {
				closed = true
				cur = nil
			}
			continue
		}
		if strings.HasPrefix(line, "#bytes") || strings.HasPrefix(line, "#flows") {
			l, err := parseHeader(line)
			if err != nil {
				return nil, &ParseError{Name: name, Line: lineNo, Msg: err.Error()}
			}
			l.line = lineNo
			if kind != nil && (kind.kind != l.kind || kind.unit != l.unit) {
				return nil, &ParseError{Name: name, Line: lineNo, Msg: fmt.Sprintf("a %s table follows the %s table of line %d", describe(l), describe(kind), kind.line)}
			}
			if kind == nil {
				kind = l
				rep.Kind, rep.Unit = l.kind, l.unit
			}
			cur, closed = l, false
			continue
		}
		if cur == nil {
			if kind == nil {
				parseInfo(rep, raw, line)
			}
			continue
		}
		if !startsWithDigit(line) {
			rep.Warnings = append(rep.Warnings, line)
			continue
		}
		if err := parseRow(rep, cur, line); err != nil {
			return nil, &ParseError{Name: name, Line: lineNo, Msg: err.Error()}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &ParseError{Name: name, Line: lineNo + 1, Msg: fmt.Sprintf("read: %v", err)}
	}
	switch {
	case kind == nil:
		msg := "no perftest result table (no \"#bytes\" header line)"
		if lastText != "" {
			msg += "; last line: " + strconvQuote(lastText)
		}
		return nil, &ParseError{Name: name, Msg: msg, Err: ErrNoTable}
	case len(rep.Bandwidth) == 0 && len(rep.Latency) == 0:
		return nil, &ParseError{Name: name, Line: kind.line, Msg: "truncated: the table header has no result rows"}
	case !closed:
		return nil, &ParseError{Name: name, Line: lineNo, Msg: fmt.Sprintf("truncated: the table of line %d is not closed by perftest's dashed line", kind.line)}
	}
	return rep, nil
}

// ParseBytes is Parse over a byte slice.
func ParseBytes(name string, b []byte) (*Report, error) { return Parse(name, bytes.NewReader(b)) }

func describe(l *layout) string {
	if l.unit != "" {
		return fmt.Sprintf("%s [%s]", l.kind, l.unit)
	}
	return string(l.kind)
}

func strconvQuote(s string) string {
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return strconv.Quote(s)
}

func isDashLine(s string) bool {
	if len(s) < 10 {
		return false
	}
	for _, c := range s {
		if c != '-' {
			return false
		}
	}
	return true
}

func startsWithDigit(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

// parseHeader recognises every header perftest prints (RESULT_FMT* in
// perftest_parameters.h).
func parseHeader(line string) (*layout, error) {
	l := &layout{}
	l.cpu = strings.Contains(line, "CPU_Util[")
	switch {
	case strings.HasPrefix(line, "#flows"):
		return nil, errors.New("flow-steering rate tables (raw_ethernet_fs_rate) are not supported")
	case strings.Contains(line, "BW peak["):
		l.kind = Bandwidth
		u := between(line, "BW peak[", "]")
		switch u {
		case "Gb/sec", "MB/sec", "MiB/sec":
			l.unit = u
		default:
			return nil, fmt.Errorf("unknown bandwidth unit %q in table header", u)
		}
		if !strings.Contains(line, "BW average[") || !strings.Contains(line, "MsgRate[Mpps]") {
			return nil, fmt.Errorf("unknown bandwidth table header %s", strconvQuote(line))
		}
		l.sl = strings.Contains(line, "#sl")
		l.perPort = strings.Contains(line, "BW Port1[")
	case strings.Contains(line, "t_min[usec]"):
		l.kind = Latency
		// t_min t_max t_typical, then (perftest >= 4) t_avg t_stdev 99% 99.9%.
		l.latCols = 3
		if strings.Contains(line, "t_avg[usec]") {
			if !strings.Contains(line, "99.9% percentile[usec]") {
				return nil, fmt.Errorf("unknown latency table header %s", strconvQuote(line))
			}
			l.latCols = 7
		}
	case strings.Contains(line, "t_avg[usec]"):
		l.kind = LatencyDuration
		l.latCols = 1
		if strings.Contains(line, "tps average") {
			l.latCols = 2
		}
	default:
		return nil, fmt.Errorf("unknown perftest table header %s", strconvQuote(line))
	}
	return l, nil
}

func between(s, start, end string) string {
	i := strings.Index(s, start)
	if i < 0 {
		return ""
	}
	s = s[i+len(start):]
	j := strings.Index(s, end)
	if j < 0 {
		return s
	}
	return s[:j]
}

func parseRow(rep *Report, l *layout, line string) error {
	f := strings.Fields(line)
	want := 2
	switch l.kind {
	case Bandwidth:
		want += 3
		if l.sl {
			want++
		}
		if l.perPort {
			want += 4
		}
	default:
		want += l.latCols
	}
	if l.cpu {
		want++
	}
	if len(f) != want {
		return fmt.Errorf("result row has %d fields, the %s header wants %d: %s", len(f), describe(l), want, strconvQuote(line))
	}
	var p rowParser
	size := p.int(f[0], "#bytes")
	i := 1
	var sl *int
	if l.sl {
		v := int(p.int(f[1], "#sl"))
		sl = &v
		i++
	}
	iters := p.int(f[i], "#iterations")
	i++
	var cpu *float64
	if l.cpu {
		v := p.float(f[len(f)-1], "CPU_Util")
		cpu = &v
	}
	if l.kind == Bandwidth {
		factor := 1.0
		if l.unit != "Gb/sec" {
			factor = mebibyteGbps
		}
		row := BWRow{
			Bytes: size, Iterations: iters, SL: sl,
			PeakGbps:    p.float(f[i], "BW peak") * factor,
			AvgGbps:     p.float(f[i+1], "BW average") * factor,
			MsgRateMpps: p.float(f[i+2], "MsgRate"),
			CPUUtil:     cpu,
		}
		if p.err != nil {
			return p.err
		}
		if row.AvgGbps == 0 && row.MsgRateMpps > 0 && size > 0 {
			row.AvgGbps, row.AvgFromMsgRate = avgFromMsgRate(row.MsgRateMpps, size), true
		}
		rep.Bandwidth = append(rep.Bandwidth, row)
		return nil
	}
	row := LatRow{Bytes: size, Iterations: iters, CPUUtil: cpu}
	vals := make([]*float64, l.latCols)
	for k := range vals {
		v := p.float(f[i+k], "latency")
		vals[k] = &v
	}
	if p.err != nil {
		return p.err
	}
	switch l.latCols {
	case 1:
		row.AvgUsec = vals[0]
	case 2:
		row.AvgUsec, row.TPS = vals[0], vals[1]
	case 3:
		row.MinUsec, row.MaxUsec, row.TypicalUsec = vals[0], vals[1], vals[2]
	case 7:
		row.MinUsec, row.MaxUsec, row.TypicalUsec = vals[0], vals[1], vals[2]
		row.AvgUsec, row.StdevUsec, row.P99Usec, row.P999Usec = vals[3], vals[4], vals[5], vals[6]
	}
	rep.Latency = append(rep.Latency, row)
	return nil
}

// rowParser keeps the first conversion error of a row.
type rowParser struct{ err error }

func (p *rowParser) int(s, col string) int64 {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("column %s: %q is not an integer", col, s)
	}
	if v < 0 && p.err == nil {
		p.err = fmt.Errorf("column %s: %q is negative", col, s)
	}
	return v
}

func (p *rowParser) float(s, col string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err == nil && (v != v || v < 0 || v > 1e18) { // NaN, negative, Inf
		err = errors.New("out of range")
	}
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("column %s: %q is not a number", col, s)
	}
	return v
}

// infoKeys are the parameter-block keys kept in Report.Info.
var infoKeys = map[string]bool{
	"Device": true, "Number of qps": true, "Transport type": true, "Connection type": true,
	"Mtu": true, "Link type": true, "GID index": true, "rdma_cm QPs": true,
	"Data ex. method": true, "TX depth": true, "Post List": true, "CQ Moderation": true,
	"Max inline data": true, "Dual-port": true, "Using SRQ": true,
}

// parseInfo reads the title and " key : value" lines before the table. One
// line can hold two pairs ("Dual-port : OFF\t\tDevice : ib0"), separated by
// tabs as perftest prints them or by runs of spaces where a terminal or a
// document turned the tabs into spaces.
func parseInfo(rep *Report, raw, line string) {
	if !strings.Contains(line, ":") {
		if rep.Test == "" && strings.HasSuffix(line, "Test") {
			rep.Test = line
		}
		return
	}
	for _, kv := range infoPairs(strings.ReplaceAll(raw, "\t", "   ")) {
		if !infoKeys[kv[0]] {
			continue
		}
		if rep.Info == nil {
			rep.Info = map[string]string{}
		}
		rep.Info[kv[0]] = kv[1]
	}
}

// infoPairs splits "k1 : v1     k2 : v2" into pairs: a value ends at the
// last run of three spaces before the next key (the words before the next
// colon).
func infoPairs(s string) [][2]string {
	var out [][2]string
	for {
		i := strings.Index(s, ":")
		if i < 0 {
			return out
		}
		key, rest := strings.TrimSpace(s[:i]), s[i+1:]
		val := rest
		s = ""
		if j := strings.Index(rest, ":"); j >= 0 {
			if k := strings.LastIndex(strings.TrimRight(rest[:j], " "), "   "); k >= 0 {
				val, s = rest[:k], rest[k:]
			}
		}
		out = append(out, [2]string{key, strings.TrimSpace(val)})
	}
}
