package main

import (
	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/validate/watch"
)

// shardFlags is watch's --shard: this process watches one of N shards of
// the fabric's switches (validate/watch.Shard), so that N replicas (a
// StatefulSet) scale watch out, each its own Prometheus target.
type shardFlags struct {
	shard  string
	parsed watch.Shard
	// priorities is --priorities: which priorities get per-port series.
	priorities string
	detail     watch.Detail
	// nonzero is --nonzero: per-port series only for counters not zero.
	nonzero bool
}

func (s *shardFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&s.shard, "shard", "", `watch only shard INDEX of COUNT ("INDEX/COUNT", INDEX from 0; or "POD_NAME/COUNT" for a StatefulSet pod "<name>-<ordinal>"): each switch belongs to one shard by a hash of its name, and stays on it when switches are added or removed`)
	cmd.Flags().StringVar(&s.priorities, "priorities", "all", `which priorities get per-port series: "all" the policy's classes use, or "lossless" only those of lossless (PFC) and CNP classes (fewer series; the example alerts need no others)`)
	cmd.Flags().BoolVar(&s.nonzero, "nonzero", false, `export a per-port counter only once it is not zero (a queue that never dropped has no drops series; fewer series on a healthy fabric, but increase() misses a series' first step)`)
}

func (s *shardFlags) validate() error {
	d, err := watch.ParseDetail(s.priorities)
	if err != nil {
		return usagef("--priorities %v", err)
	}
	s.detail = d
	if s.shard == "" {
		return nil
	}
	sh, err := watch.ParseShard(s.shard)
	if err != nil {
		return usagef("--shard: %v", err)
	}
	s.parsed = sh
	return nil
}
