package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/validate/watch"
)

type watchOptions struct {
	switchFlags
	listen        string
	interval      time.Duration
	driftInterval time.Duration
	noDrift       bool
}

func newWatchCmd(d *deps) *cobra.Command {
	o := &watchOptions{}
	cmd := &cobra.Command{
		Use: "watch -f INTENT [--listen :9464]",
		// Ctrl-C or SIGTERM is how watch ends: exit 0, not "interrupted".
		Annotations: map[string]string{annotationUntilSignal: "true"},
		Short:       "Stream switch counters and drift continuously and serve them as Prometheus metrics",
		Long: `Watch subscribes to every switch with gNMI Subscribe STREAM and serves Prometheus
metrics on /metrics until it is stopped (SIGINT/SIGTERM):

  - SAMPLE (every --interval) for queue drops, ECN marks, PFC pause frames (tx, rx),
    PFC watchdog detections and PFC buffer discards, at the same per-platform paths
    fabricctl validate reads (SONiC COUNTERS_DB, SR Linux and OpenConfig qos);
  - ON_CHANGE for the subtrees fabricctl owns: a change re-compares the switch with
    the intent exactly as fabricctl diff does (fabricctl_drift_paths), and so does a
    full re-check every --drift-interval (EOS CLI settings and targets that refuse
    ON_CHANGE are covered by it).

Each switch has its own session: one that fails or disconnects shows
fabricctl_target_up 0 and is reconnected with exponential backoff (1s to 60s, with
jitter); the others carry on. Only inventory ports and the priorities the
policy's classes use are exported. /healthz answers 200 while watch runs.

Host metrics come from "fabricctl host apply --watch" on each host.`,
		Example: `  fabricctl watch -f fabric.yaml --listen :9464
  fabricctl watch -f fabric.yaml --switch leaf1 --interval 1s --no-drift`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if o.interval < 100*time.Millisecond {
				return usagef("--interval %s: want at least 100ms", o.interval)
			}
			if o.driftInterval < time.Second {
				return usagef("--drift-interval %s: want at least 1s", o.driftInterval)
			}
			return o.run(cmd.Context(), d, cmd.ErrOrStderr())
		},
	}
	o.bind(cmd)
	cmd.Flags().StringVar(&o.listen, "listen", ":9464", "address to serve /metrics on")
	cmd.Flags().DurationVar(&o.interval, "interval", watch.DefaultSampleInterval, "counter SAMPLE interval")
	cmd.Flags().DurationVar(&o.driftInterval, "drift-interval", watch.DefaultDriftInterval, "full drift re-check period")
	cmd.Flags().BoolVar(&o.noDrift, "no-drift", false, "stream counters only (no ON_CHANGE, no drift metrics)")
	return cmd
}

func (o *watchOptions) run(ctx context.Context, d *deps, errOut io.Writer) error {
	f, eng, err := o.load(d)
	if err != nil {
		return err
	}
	wo := watch.Options{Fabric: f, Switches: o.switches, Transport: eng.Transport, SampleInterval: o.interval,
		DriftInterval: o.driftInterval, Log: d.log}
	if !o.noDrift {
		wo.Engine = eng
	}
	w, err := watch.New(wo)
	if err != nil {
		return withCode(ExitError, err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(w.Health(), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("/metrics", w.Handler(reg))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	l, err := net.Listen("tcp", o.listen)
	if err != nil {
		return withCode(ExitError, fmt.Errorf("--listen %s: %w", o.listen, err))
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srvErr := make(chan error, 1)
	go func() { srvErr <- srv.Serve(l) }()
	fmt.Fprintf(errOut, "fabricctl watch: %d switches, metrics on http://%s/metrics\n", len(f.Switches), l.Addr())
	done := make(chan struct{})
	go func() {
		_ = w.Run(ctx)
		close(done)
	}()
	select {
	case <-ctx.Done():
	case err = <-srvErr:
		cancel()
	}
	shut, cancelShut := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancelShut()
	_ = srv.Shutdown(shut)
	<-done
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return withCode(ExitError, fmt.Errorf("serve metrics: %w", err))
	}
	return nil
}
