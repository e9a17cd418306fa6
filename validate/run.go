package validate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/validate/schedule"
)

// Options configure a validation run.
type Options struct {
	Engine Engine
	// Sources are read before and after the traffic.
	Sources []Source
	// Readback returns a plan of the live configuration against the intent
	// (switches and hosts); nil skips the readback phase.
	Readback func(ctx context.Context) (*plan.Plan, error)
	// ReadbackSkipped are targets the readback leaves out ("host gpu1") and
	// why; each is reported as a skipped readback check, so every host has
	// a readback row.
	ReadbackSkipped map[string]string
	// AllPairs runs every pair of hosts (N-1 rounds); Incast runs the N->1
	// test (Validation.Incast senders, 0 = all other hosts).
	AllPairs, Incast bool
	// Latency runs latency rounds too (engines that do not measure latency
	// with bandwidth).
	Latency bool
	Log     *slog.Logger
	// CounterTimeout bounds each counter source's read (default 2 minutes):
	// a host stuck in `ethtool -S` (a driver waiting on its firmware) or a
	// silent switch becomes an error check instead of hanging the run.
	CounterTimeout time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Predict runs every round's flows in the simulator as well: the
	// report shows what it predicts beside what was measured (nil = no
	// prediction).
	Predict *Predictor
}

// rails returns the host NICs by rail: rail k is the k-th NIC of every host
// that has one, in host order (GPU servers cable NIC k of every host to the
// same leaf). Rails with fewer than two NICs are left out.
func rails(f *intent.Fabric) [][]Endpoint {
	var out [][]Endpoint
	for k := 0; ; k++ {
		var eps []Endpoint
		for _, h := range f.Hosts {
			if len(h.NICs) > k {
				eps = append(eps, Endpoint{Host: h.Name, NIC: h.NICs[k]})
			}
		}
		if len(eps) < 2 {
			return out
		}
		out = append(out, eps)
	}
}

// Run validates f: configuration readback, counters before, traffic rounds
// (all-pairs in N-1 rounds of disjoint pairs, then incast N->1), counters
// after, and the verdict. An error means the run itself could not proceed;
// failed checks are in the report. When ctx ends during the traffic (Ctrl-C)
// Run returns the report so far (the flows measured, no counter verdict)
// with the error.
func Run(ctx context.Context, f *intent.Fabric, o Options) (*Report, error) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.Engine == nil {
		return nil, fmt.Errorf("validate %s: no traffic engine", f.Name)
	}
	start := now()
	rep := &Report{Fabric: f.Name, Engine: o.Engine.Name(), Started: start.UTC()}
	if n, ok := o.Engine.(engineNoter); ok {
		rep.EngineNote = n.Note()
	}
	var ps *predictState
	if o.Predict != nil {
		ps = newPredictState(o.Predict)
	}
	// runRound runs one round on the engine and, with a predictor, in the
	// simulator on the same flows, scaled to the round's traffic time.
	runRound := func(kind string, flows []Flow) {
		t0 := now()
		res := o.Engine.Run(ctx, kind, flows)
		wall := now().Sub(t0)
		rep.TrafficElapsed += wall
		rep.Rounds++
		if ps != nil && ctx.Err() == nil {
			traffic := wall
			if tt, ok := o.Engine.(trafficTimer); ok && tt.TrafficTime(kind) > 0 {
				traffic = tt.TrafficTime(kind)
			}
			ps.round(ctx, kind, flows, res, traffic)
		}
		rep.Flows = append(rep.Flows, res...)
	}

	if o.Readback != nil {
		p, err := o.Readback(ctx)
		if err != nil {
			rep.Checks = append(rep.Checks, Check{Name: "readback", Phase: PhaseReadback, Status: Error, Message: err.Error()})
		} else {
			rep.Checks = append(rep.Checks, ReadbackChecks(p)...)
		}
	}
	// Targets left out are reported as skipped, with or without a
	// readback of the others (the sim engine alone reads no device).
	targets := make([]string, 0, len(o.ReadbackSkipped))
	for t := range o.ReadbackSkipped {
		targets = append(targets, t)
	}
	sort.Strings(targets)
	for _, t := range targets {
		rep.Checks = append(rep.Checks, Check{Name: "readback", Phase: PhaseReadback, Target: t, Status: Skip, Message: o.ReadbackSkipped[t]})
	}

	before, errs := readAll(ctx, o.Sources, o.CounterTimeout)
	rep.Checks = append(rep.Checks, errs...)
	failed := map[string]bool{}
	for _, c := range errs {
		failed[c.Target] = true
	}

	// Every rail runs the same schedule at the same time: a round has the
	// disjoint pairs of every rail, so N hosts with R NICs each still take
	// N-1 rounds.
	rs := rails(f)
	if (o.AllPairs || o.Incast) && len(rs) == 0 {
		return nil, fmt.Errorf("validate %s: %w", f.Name, errNoHosts)
	}
	if o.AllPairs {
		sched := make([][]schedule.Round, len(rs))
		maxRounds := 0
		for k, eps := range rs {
			r, err := schedule.AllPairs(len(eps))
			if err != nil {
				return nil, err
			}
			sched[k] = r
			maxRounds = max(maxRounds, len(r))
		}
		kinds := []string{KindBandwidth}
		if o.Latency && !o.Engine.MeasuresLatency() {
			kinds = append(kinds, KindLatency)
		}
		for _, kind := range kinds {
			test := "all-pairs"
			if kind == KindLatency {
				test = "latency"
			}
			for ri := 0; ri < maxRounds; ri++ {
				if err := ctx.Err(); err != nil {
					return rep.partial(now, start), fmt.Errorf("validate %s: %w", f.Name, err)
				}
				var flows []Flow
				for k, eps := range rs {
					if ri >= len(sched[k]) {
						continue
					}
					for _, p := range sched[k][ri] {
						flows = append(flows, Flow{Test: test, Round: ri + 1, Client: eps[p.Client], Server: eps[p.Server]})
					}
				}
				log.Info("traffic round", "test", test, "round", ri+1, "flows", len(flows))
				runRound(kind, flows)
			}
		}
	}
	incastRan := false
	if o.Incast && len(rs[0]) >= 3 {
		var flows []Flow
		for _, eps := range rs {
			if len(eps) < 3 {
				continue
			}
			n := f.Validation.Incast
			if n <= 0 || n > len(eps)-1 {
				n = len(eps) - 1
			}
			senders := make([]int, n)
			for i := range senders {
				senders[i] = i + 1
			}
			r, err := schedule.Incast(0, senders)
			if err != nil {
				return nil, err
			}
			for _, p := range r {
				flows = append(flows, Flow{Test: "incast", Round: 1, Client: eps[p.Client], Server: eps[p.Server]})
			}
		}
		log.Info("traffic round", "test", "incast", "flows", len(flows), "receiver", rs[0][0].Host)
		runRound(KindBandwidth, flows)
		incastRan = true
	} else if o.Incast {
		rep.Checks = append(rep.Checks, Check{Name: "traffic.incast", Phase: PhaseTraffic, Status: Skip, Message: fmt.Sprintf("incast needs at least 3 hosts, the intent has %d", len(rs[0]))})
	}
	if err := ctx.Err(); err != nil {
		return rep.partial(now, start), fmt.Errorf("validate %s: %w", f.Name, err)
	}

	// Sources that failed before cannot give a delta: not read again, so
	// each failure is reported once.
	var again []Source
	for _, s := range o.Sources {
		if !failed[s.Name()] {
			again = append(again, s)
		}
	}
	after, errs := readAll(ctx, again, o.CounterTimeout)
	rep.Checks = append(rep.Checks, errs...)
	rep.Deltas = Delta(before, after)
	if len(rep.Deltas) == 0 {
		rep.Deltas = nil
	}
	for t, rs := range Resets(before, after) {
		if len(rs) == 0 {
			continue
		}
		rep.Checks = append(rep.Checks, Check{Name: "counters.reset", Phase: PhaseCounters, Target: t, Status: Error,
			Observed: strings.Join(rs, " "), Limit: "monotonic during the run",
			Message: "counters went backwards during the run (cleared, driver reload or wrap): what they counted before is lost, so their deltas are only lower bounds"})
	}
	if len(o.Sources) > 0 {
		rep.Checks = append(rep.Checks, counterChecks(verdictInput{policy: &f.Policy, deltas: rep.Deltas, incastRan: incastRan, lossy: f.Validation.Lossy, hosts: f.Hosts})...)
	}
	rep.Checks = append(rep.Checks, trafficChecks(rep.Flows, f.Validation, o.Engine.Name())...)
	if ps != nil {
		rep.Checks = append(rep.Checks, ps.finish(rep, verdictInput{policy: &f.Policy}.lossless())...)
		rep.Prediction = ps.pred
	}
	rep.sortChecks()
	rep.Elapsed = now().Sub(start)
	return rep, nil
}

// partial finishes a report cut short: the flows measured so far are judged,
// and a check says the run was interrupted.
func (r *Report) partial(now func() time.Time, start time.Time) *Report {
	r.Checks = append(r.Checks, Check{Name: "run", Phase: PhaseTraffic, Status: Error, Message: "interrupted: the report covers the traffic rounds run so far, without counter deltas"})
	r.sortChecks()
	r.Elapsed = now().Sub(start)
	return r
}

// defaultCounterTimeout is Options.CounterTimeout's default.
const defaultCounterTimeout = 2 * time.Minute

// readAll reads every source concurrently, each bounded by timeout (0 =
// defaultCounterTimeout); a failed source becomes an error check and is
// left out of the sample.
func readAll(ctx context.Context, sources []Source, timeout time.Duration) (Sample, []Check) {
	if timeout <= 0 {
		timeout = defaultCounterTimeout
	}
	type res struct {
		s   Sample
		err error
	}
	out := make([]res, len(sources))
	var wg sync.WaitGroup
	for i, src := range sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			// Not every read honours its context (an ioctl takes none): a
			// source that does not answer in time is left behind.
			ch := make(chan res, 1)
			go func() {
				s, err := src.Read(rctx)
				ch <- res{s, err}
			}()
			select {
			case r := <-ch:
				out[i] = r
			case <-rctx.Done():
				out[i] = res{nil, rctx.Err()}
			}
			if out[i].err != nil && ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
				out[i].err = fmt.Errorf("%s: no answer within %v: %w", src.Name(), timeout, out[i].err)
			}
		}()
	}
	wg.Wait()
	all := Sample{}
	var checks []Check
	for i, r := range out {
		if r.err != nil {
			st := Error
			if errors.Is(r.err, ErrNotApplicable) {
				st = Skip
			}
			checks = append(checks, Check{Name: "counters.read", Phase: PhaseCounters, Target: sources[i].Name(), Status: st, Message: r.err.Error()})
			continue
		}
		for t, m := range r.s {
			all[t] = m
		}
	}
	sort.Slice(checks, func(i, j int) bool { return checks[i].Target < checks[j].Target })
	return all, checks
}
