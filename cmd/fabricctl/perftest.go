package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/validate/perftest"
)

func newPerftestCmd(d *deps) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "perftest",
		Short: "Work with linux-rdma perftest (ib_write_bw, ib_write_lat ...) output",
	}
	cmd.AddCommand(newPerftestParseCmd(d))
	return cmd
}

type perftestParseOptions struct {
	output string
}

func newPerftestParseCmd(d *deps) *cobra.Command {
	o := &perftestParseOptions{}
	cmd := &cobra.Command{
		Use:   "parse [FILE|-]",
		Short: "Parse perftest text output into JSON or a normalised table",
		Long: `Parse reads the text output of a perftest tool (ib_write_bw, ib_send_bw, ib_read_bw,
ib_write_lat, ib_send_lat ...) from FILE, or from stdin when FILE is "-" or absent,
and prints its result table with units normalised: bandwidth in Gb/s (perftest's
MB/sec and MiB/sec are both 2^20 bytes/s), message rate in Mpps, latency in
microseconds. Every table variant is read: MB/MiB/Gb headers, -a multi-row,
duration mode (-D) bandwidth and latency, --cpu_util, interleaved warnings.

Use it instead of perftest's --out_json, which is not valid JSON before perftest
24.01 and is overwritten per report.

Exit codes: 0 parsed, 1 unreadable or truncated output (the error names the line).`,
		Example: `  ib_write_bw -d mlx5_0 -x 3 -F --report_gbits 10.0.0.2 | fabricctl perftest parse -o json
  fabricctl perftest parse lat.txt`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output, "text", "json"); err != nil {
				return err
			}
			name := "-"
			if len(args) == 1 {
				name = args[0]
			}
			return o.run(cmd.InOrStdin(), cmd.OutOrStdout(), name)
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	return cmd
}

func (o *perftestParseOptions) run(stdin io.Reader, out io.Writer, name string) error {
	in := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("perftest parse: %w", err)
		}
		defer f.Close()
		in = f
	}
	rep, err := perftest.Parse(name, in)
	if err != nil {
		return err
	}
	if o.output == "json" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", b)
		return err
	}
	return perftest.WriteText(out, rep)
}
