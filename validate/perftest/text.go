package perftest

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText renders r as an aligned table in normalised units.
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	if r.Test != "" {
		fmt.Fprintf(&b, "%s (%s)\n", r.Test, r.Kind)
	} else {
		fmt.Fprintf(&b, "%s\n", r.Kind)
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	switch r.Kind {
	case Bandwidth:
		fmt.Fprintln(tw, "bytes\titerations\tpeak Gb/s\tavg Gb/s\tMpps\tCPU %\t")
		for _, row := range r.Bandwidth {
			fmt.Fprintf(tw, "%d\t%d\t%.2f\t%.2f\t%.6f\t%s\t\n", row.Bytes, row.Iterations, row.PeakGbps, row.AvgGbps, row.MsgRateMpps, opt(row.CPUUtil))
		}
	default:
		fmt.Fprintln(tw, "bytes\titerations\tmin us\tmax us\ttypical us\tavg us\tstdev us\tp99 us\tp99.9 us\ttps\t")
		for _, row := range r.Latency {
			fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", row.Bytes, row.Iterations,
				opt(row.MinUsec), opt(row.MaxUsec), opt(row.TypicalUsec), opt(row.AvgUsec), opt(row.StdevUsec),
				opt(row.P99Usec), opt(row.P999Usec), opt(row.TPS))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", warn)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func opt(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *v)
}
