package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/safchain/ethtool"

	"github.com/fabricctl/fabricctl/hostdrv"
	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/exporter"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/validate"
	"github.com/fabricctl/fabricctl/validate/watch"
)

// serveHostMetrics serves /metrics for host apply --watch --listen: the
// host's RDMA hw_counters (sysfs under --root), its ethtool per-priority
// pause and discard counters (in --netns when given) and its drift. stop
// ends the server.
func (o *hostOptions) serveHostMetrics(ctx context.Context, d *deps, f *intent.Fabric, h *intent.Host) (*watch.HostCollector, func(), error) {
	hc := &watch.HostCollector{FS: os.DirFS(o.root)}
	hc.SetIntent(h, &f.Policy)
	var closers []func()
	newEthtool := func() error {
		et, err := ethtool.NewEthtool()
		if err != nil {
			return err
		}
		hc.Stats = et
		closers = append(closers, et.Close)
		return nil
	}
	var err error
	if o.netns != "" {
		var exec func(string, func() error) error
		if exec, err = validate.NetnsExec(map[string]string{h.Name: o.netns}); err == nil {
			err = exec(h.Name, newEthtool)
		}
	} else {
		err = newEthtool()
	}
	if err != nil {
		// The RDMA counters and drift still work without driver stats.
		d.log.Warn("no ethtool socket: per-priority pause counters are not exported", "err", err)
	}
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	var web *exporter.Config
	if o.webConfig != "" {
		if web, err = exporter.LoadConfig(o.webConfig); err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("--web-config: %w", err)
		}
	}
	reg := prometheus.NewRegistry()
	v := readVersion()
	if err := reg.Register(hc); err != nil {
		closeAll()
		return nil, nil, err
	}
	reg.MustRegister(watch.BuildInfo(v.Version, v.Revision, v.GoVersion))
	srv, err := exporter.Listen(exporter.Options{Addr: o.listen, Web: web, Metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})})
	if err != nil {
		closeAll()
		return nil, nil, fmt.Errorf("--listen %s: %w", o.listen, err)
	}
	go func() {
		if err := srv.Serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.log.Error("host metrics server stopped", "err", err)
		}
	}()
	d.log.Info("host metrics", "url", srv.URL())
	return hc, func() {
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
		closeAll()
	}, nil
}

// remainingDrift is what a reconcile round found: the drifted paths of its
// plan, or the error that kept the host from being read fully.
func remainingDrift(p *hostdrv.Plan, err error) (int, error) {
	if p == nil {
		return 0, err
	}
	n := 0
	for _, c := range p.Target.Changes {
		if c.Action != plan.NoOp {
			n++
		}
	}
	return n, err
}
