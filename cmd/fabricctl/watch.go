package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
	"github.com/fabricctl/fabricctl/internal/exporter"
	"github.com/fabricctl/fabricctl/validate/watch"
)

type watchOptions struct {
	switchFlags
	listen        string
	webConfig     string
	interval      time.Duration
	driftInterval time.Duration
	noDrift       bool
	reloadEvery   time.Duration
	shard         shardFlags
}

func newWatchCmd(d *deps) *cobra.Command {
	o := &watchOptions{}
	cmd := &cobra.Command{
		Use: "watch -f INTENT [--listen 127.0.0.1:9464] [--web-config FILE]",
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
policy's classes use are exported, and a switch that is not streaming exports
none (its series go stale; fabricctl_switch_last_sample_timestamp_seconds says
when its last sample came). /healthz answers 200 while watch runs.

/metrics listens on 127.0.0.1:9464 unless --listen names another address (a pod
names its own IP). --web-config takes a file in the Prometheus exporter-toolkit
web-config format: tls_server_config (HTTPS, client certificates),
basic_auth_users (bcrypt hashes), http_server_config; and fabricctl's
bearer_token_hashes (bcrypt hashes of accepted bearer tokens). /healthz needs no
credentials. At most 4 scrapes are served at once (more get 503), and a
response that takes over 2 minutes to write is cut off.

The intent is reloaded on SIGHUP and when a file given with -f changes (checked every
--reload-interval; a Kubernetes ConfigMap update, which swaps a symlink, is seen too).
Switches added to it get a session, switches removed are dropped, and a switch whose
address, platform, credentials, TLS or ports changed reconnects; the others keep
streaming untouched. An intent that does not load, that fabricctl check finds
errors in, or that no longer has a switch named with --switch is refused: the
error, with file:line, is logged, counted in
fabricctl_watch_intent_reloads_total{result="refused"}, and the previous intent keeps
running.

Host metrics come from "fabricctl host apply --watch" on each host.`,
		Example: `  fabricctl watch -f fabric.yaml --listen 10.0.0.5:9464 --web-config web.yml
  fabricctl watch -f fabric.yaml --switch leaf1 --interval 1s --no-drift`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if err := o.shard.validate(); err != nil {
				return err
			}
			if o.interval < 100*time.Millisecond {
				return usagef("--interval %s: want at least 100ms", o.interval)
			}
			if o.driftInterval < time.Second {
				return usagef("--drift-interval %s: want at least 1s", o.driftInterval)
			}
			if o.reloadEvery < 0 {
				return usagef("--reload-interval %s: want 0 (off) or a positive duration", o.reloadEvery)
			}
			return o.run(cmd.Context(), d, cmd.ErrOrStderr())
		},
	}
	o.bind(cmd)
	withoutFlags(cmd, "set-timeout", "parallel") // watch never Sets; each switch has its own session
	cmd.Flags().StringVar(&o.listen, "listen", exporter.DefaultListen, "address to serve /metrics on (host:port; the default is loopback only)")
	cmd.Flags().StringVar(&o.webConfig, "web-config", "", "exporter-toolkit web-config file: TLS, basic auth (and bearer_token_hashes) for /metrics")
	cmd.Flags().DurationVar(&o.interval, "interval", watch.DefaultSampleInterval, "counter SAMPLE interval")
	cmd.Flags().DurationVar(&o.driftInterval, "drift-interval", watch.DefaultDriftInterval, "full drift re-check period")
	cmd.Flags().BoolVar(&o.noDrift, "no-drift", false, "stream counters only (no ON_CHANGE, no drift metrics)")
	cmd.Flags().DurationVar(&o.reloadEvery, "reload-interval", 5*time.Second, "how often to check the intent files for a change (0: only on SIGHUP)")
	o.shard.bind(cmd)
	return cmd
}

func (o *watchOptions) run(ctx context.Context, d *deps, errOut io.Writer) error {
	// SIGHUP reloads the intent; caught from the start, so that it never
	// ends watch (its default action).
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var web *exporter.Config
	if o.webConfig != "" {
		var err error
		if web, err = exporter.LoadConfig(o.webConfig); err != nil {
			return usagef("--web-config: %v", err)
		}
	}
	f, eng, err := o.load(d)
	if err != nil {
		return err
	}
	if err := checkErrors(f); err != nil {
		return withCode(ExitError, err)
	}
	wo := watch.Options{Fabric: f, Switches: o.switches, Transport: eng.Transport, SampleInterval: o.interval,
		DriftInterval: o.driftInterval, Log: d.log, Shard: o.shard.parsed, Detail: o.shard.detail, NonZero: o.shard.nonzero}
	if !o.noDrift {
		wo.Engine = eng
	}
	w, err := watch.New(wo)
	if err != nil {
		return withCode(ExitError, err)
	}
	reg := prometheus.NewRegistry()
	v := readVersion()
	reg.MustRegister(w.Health(), watch.BuildInfo(v.Version, v.Revision, v.GoVersion),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	srv, err := exporter.Listen(exporter.Options{Addr: o.listen, Web: web, Metrics: w.Handler(reg)})
	if err != nil {
		return withCode(ExitError, fmt.Errorf("--listen %s: %w", o.listen, err))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srvErr := make(chan error, 1)
	go func() { srvErr <- srv.Serve() }()
	fmt.Fprintf(errOut, "fabricctl watch: %d switches, metrics on %s\n", len(f.Switches), srv.URL())
	done := make(chan struct{})
	go func() {
		_ = w.Run(ctx)
		close(done)
	}()
	go o.reloadLoop(ctx, d, w, hup)
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

// reloadLoop reloads the intent on SIGHUP and when its files change. A
// change is a different content (size, time and inode say nothing reliable
// across a ConfigMap's symlink swap); the files are read every
// --reload-interval, which costs ~10 ms for a 3 MB intent.
func (o *watchOptions) reloadLoop(ctx context.Context, d *deps, w *watch.Watcher, hup <-chan os.Signal) {
	stdin := slices.Contains(o.files, "-")
	var tick <-chan time.Time
	if o.reloadEvery > 0 && !stdin {
		tk := time.NewTicker(o.reloadEvery)
		defer tk.Stop()
		tick = tk.C
	}
	last := o.fingerprint()
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if stdin {
				d.log.Warn("SIGHUP: the intent came from standard input and cannot be read again; not reloaded")
				continue
			}
			last = o.fingerprint()
			o.reload(d, w, "SIGHUP")
		case <-tick:
			if fp := o.fingerprint(); fp != last {
				last = fp
				o.reload(d, w, "intent file changed")
			}
		}
	}
}

// fingerprint hashes the intent files' contents (an unreadable file hashes
// its error, so that its return is a change too).
func (o *watchOptions) fingerprint() string {
	h := sha256.New()
	for _, name := range o.files {
		b, err := os.ReadFile(name)
		if err != nil {
			b = []byte("error: " + err.Error())
		}
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(b))
		h.Write(b)
	}
	return string(h.Sum(nil))
}

func (o *watchOptions) reload(d *deps, w *watch.Watcher, why string) {
	r, err := w.ReloadFrom(func() (*intent.Fabric, error) {
		f, err := o.loadIntent(d, nil)
		if err != nil {
			return nil, err
		}
		return f, checkErrors(f)
	})
	if err != nil {
		d.log.Error("intent reload refused; the previous intent keeps running", "reason", why, "err", err)
		return
	}
	d.log.Info("intent reloaded", "reason", why, "added", r.Added, "removed", r.Removed, "restarted", r.Restarted, "kept", len(r.Kept))
}

// checkErrors is what fabricctl check calls an error in f (ECN Kmin above
// Kmax, a priority out of range), each with its file:line, or nil. watch
// refuses such an intent, at start and on reload, as it refuses one that
// does not parse: drift would compare the switches with an intent apply
// refuses.
func checkErrors(f *intent.Fabric) error {
	var errs []error
	for _, fd := range check.Run(f, check.Options{}) {
		if fd.Severity >= check.Error {
			errs = append(errs, errors.New(fd.String()))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("fabricctl check finds errors in the intent: %w", errors.Join(errs...))
	}
	return nil
}
