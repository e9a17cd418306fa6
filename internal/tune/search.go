package tune

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
	"github.com/fabricctl/fabricctl/internal/sim"
)

// Defaults of Options.
const (
	DefaultBudget = 160
	// DefaultSize is the message of each flow of a generated scenario
	// (incast:N:1 ...) when it names none: tune ranks flow completion
	// times, so every generated flow has a size.
	DefaultSize = 512_000
	// ProbeDuration is the fabric time of the first run of each scenario
	// with the intent as it is: the search then runs each for twice the
	// time its last flow took (at least 200 us more).
	ProbeDuration = 20 * time.Millisecond
	// searchSamples is the samples of a search run (the plots of the
	// before and after runs take sim's default).
	searchSamples = 16
)

// Options shape a search.
type Options struct {
	// Scenarios are simulate's scenario specs (incast:N:1, alltoall,
	// slow-receiver:PCT, link-down:A-B, a .yaml file).
	Scenarios []string
	// Size is the message of each generated flow (0 = DefaultSize).
	Size int64
	// Class is the class tuned ("" = the first lossless class).
	Class    string
	Seed     int64         // 0 = sim.DefaultSeed
	Duration time.Duration // 0 = from the probe run
	// Budget is how many settings are simulated at most per mode (each
	// over every scenario); 0 = DefaultBudget.
	Budget int
	// DCQCN searches the hosts' DCQCN parameters too.
	DCQCN bool
	// Modes searches every RoCE mode the intent's platforms can compile
	// (Refusal) besides the intent's own, each within Budget: the best of
	// each mode and the best of all come back (Result.Modes).
	Modes bool
	// Parallel is how many simulations run at once (0 = 1). The result
	// does not depend on it.
	Parallel int
	Star     sim.StarOptions
}

// Metrics are what one run of one scenario measured.
type Metrics struct {
	Scenario      string        `json:"scenario"`
	Flows         int           `json:"flows"`      // flows with a size
	Unfinished    int           `json:"unfinished"` // of those, not acknowledged by the end
	P99FCT        time.Duration `json:"p99FctNs"`
	MedianFCT     time.Duration `json:"medianFctNs"`
	LosslessDrops int64         `json:"losslessDrops"`
	Drops         int64         `json:"drops"`
	PauseTime     time.Duration `json:"pauseTimeNs"` // every port's lossless priorities, summed
	// Throughput is the payload delivered (every flow) per second until
	// the last sized flow completed (the end of the run when one did not).
	Throughput float64 `json:"throughputBps"`
}

// Score is a setting's metrics over every scenario, in the order the
// objective ranks them.
type Score struct {
	Setting Setting   `json:"-"`
	Runs    []Metrics `json:"runs"`
	// Drops is the lossless drops of every run: any is disqualifying in
	// lossless mode.
	Drops      int64 `json:"losslessDrops"`
	Unfinished int   `json:"unfinished"`
	// FCT is the mean over the scenarios of p99 FCT relative to the
	// intent's own (1 = the same; lower is better).
	FCT        float64       `json:"p99FctRelative"`
	PauseTime  time.Duration `json:"pauseTimeNs"`
	Throughput float64       `json:"throughputBps"`
}

// better reports whether a ranks above b: fewer lossless drops, fewer
// unfinished flows, lower p99 FCT (by more than 0.2 %), less pause time
// (by more than 1 %), more throughput (by more than 0.1 %).
func better(a, b *Score) bool {
	switch {
	case a.Drops != b.Drops:
		return a.Drops < b.Drops
	case a.Unfinished != b.Unfinished:
		return a.Unfinished < b.Unfinished
	case math.Abs(a.FCT-b.FCT) > 0.002*b.FCT:
		return a.FCT < b.FCT
	case math.Abs(float64(a.PauseTime-b.PauseTime)) > 0.01*float64(b.PauseTime):
		return a.PauseTime < b.PauseTime
	case math.Abs(a.Throughput-b.Throughput) > 0.001*b.Throughput:
		return a.Throughput > b.Throughput
	}
	return false
}

// Result is a search's outcome.
type Result struct {
	Class  string  `json:"class"`
	Seed   int64   `json:"seed"`
	Bounds Bounds  `json:"bounds"`
	Before *Score  `json:"before"`
	After  *Score  `json:"after"`
	Base   Setting `json:"-"`
	Best   Setting `json:"-"`
	// Edits turn the intent into the tuned one (empty: the intent's
	// setting is the best found).
	Edits []Edit `json:"edits"`
	// Evaluated is how many settings were simulated.
	Evaluated int           `json:"evaluated"`
	Duration  time.Duration `json:"durationNs"` // fabric time of each search run
	Notes     []string      `json:"notes,omitempty"`
	DCQCN     bool          `json:"dcqcnSearched"`
	// Modes are the modes searched (Options.Modes), the intent's own
	// first, then the others in intent.Modes' order, refused ones with
	// why; nil without Options.Modes.
	Modes     []ModeResult `json:"-"`
	scenarios []*scenario
	fabric    *intent.Fabric
	class     *intent.Class
	opts      Options
}

type scenario struct {
	spec string
	sc   *sim.Scenario
	base time.Duration // the intent's p99 FCT
}

// RoCEClass returns the class tune works on: the named one, else the
// first lossless class that is not the CNP class, else (lossy mode) the
// policy's RoCE class, the ECN class the hosts' RoCE traffic is in.
func RoCEClass(f *intent.Fabric, name string) (*intent.Class, error) {
	if name != "" {
		cl := f.Policy.ClassByName(name)
		if cl == nil {
			return nil, fmt.Errorf("no class %q in the policy", name)
		}
		if cl.CNP {
			return nil, fmt.Errorf("class %s carries CNPs: tune the RoCE data class", name)
		}
		return cl, nil
	}
	for i := range f.Policy.Classes {
		if cl := &f.Policy.Classes[i]; cl.Lossless && !cl.CNP {
			return cl, nil
		}
	}
	if cl := f.Policy.RoCEClass(); cl != nil && cl.ECN != nil && !cl.CNP {
		return cl, nil
	}
	return nil, errors.New("the policy has no lossless class to tune, nor an ECN class for RoCE: name one with --class")
}

// baseSetting is the intent's own setting of class cl: its ECN (none:
// the thresholds check suggests are not taken; the search starts from
// its own grid) and the hosts' DCQCN parameters: the intent's
// policy.dcqcn over mlx5's defaults, what host apply writes and simulate
// runs (sim.DCQCNFromPolicy).
func baseSetting(f *intent.Fabric, cl *intent.Class) Setting {
	s := Setting{Mode: modeOf(&f.Policy), DCQCN: sim.DCQCNFromPolicy(&f.Policy)}
	if cl.ECN != nil {
		s.Kmin, s.Kmax, s.Pmax = cl.ECN.MinBytes, cl.ECN.MaxBytes, cl.ECN.Probability
	}
	return s
}

// withSetting returns a copy of f in s's mode (withMode) with s's ECN on
// class cl (check.Apply makes the edits, as --write does), sharing the
// rest with f.
func withSetting(f *intent.Fabric, cl *intent.Class, s Setting) (*intent.Fabric, error) {
	f, err := withMode(f, cl, s.Mode)
	if err != nil {
		return nil, err
	}
	g := *f
	g.Policy.Classes = slices.Clone(f.Policy.Classes)
	for i := range g.Policy.Classes {
		if c := &g.Policy.Classes[i]; c.ECN != nil {
			e := *c.ECN
			c.ECN = &e
		}
	}
	if !s.Mode.ECN() {
		return &g, nil
	}
	if s.Kmax == 0 { // the intent's class without ECN
		g.Policy.ClassByName(cl.Name).ECN = nil
		return &g, nil
	}
	path := "policy.classes[" + cl.Name + "]"
	err = check.Apply(&g, []Edit{
		{Path: path + ".ecn.min", Value: strconv.FormatInt(s.Kmin, 10)},
		{Path: path + ".ecn.max", Value: strconv.FormatInt(s.Kmax, 10)},
		{Path: path + ".ecn.probability", Value: strconv.Itoa(s.Pmax)},
	})
	return &g, err
}

// run simulates s on every scenario for d of fabric time.
func (r *Result) run(s Setting, d time.Duration, samples int) ([]*sim.Result, error) {
	g, err := withSetting(r.fabric, r.class, r.Bounds.Effective(s))
	if err != nil {
		return nil, err
	}
	var out []*sim.Result
	for _, sc := range r.scenarios {
		// sim.Build writes to its scenario (a slow receiver's name): each
		// run has its own copy, as runs go in parallel
		c := *sc.sc
		c.Slow, c.Flows = maps.Clone(c.Slow), slices.Clip(c.Flows)
		n, err := sim.Build(g, &c, r.opts.Star, r.Seed)
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", sc.spec, err)
		}
		dc := s.DCQCN
		// the hosts' loss recovery as the intent leaves the NICs (a lossy
		// or semi-lossless intent's drops are recovered, as simulate does)
		res := sim.New(n, sim.Options{Duration: d, Seed: r.Seed, DCQCN: &dc, NoECN: !s.Mode.ECN(), Samples: samples, Recovery: sim.RecoveryFor(&r.fabric.Policy)}).Run()
		out = append(out, res)
	}
	return out, nil
}

// measure reduces a run to its metrics.
func measure(spec string, res *sim.Result) Metrics {
	m := Metrics{Scenario: spec}
	var fcts []sim.Time
	var delivered int64
	end := res.Duration
	last := sim.Time(0)
	for _, f := range res.Flows {
		delivered += f.Received
		if f.Size <= 0 {
			continue
		}
		m.Flows++
		if f.FCT <= 0 {
			m.Unfinished++
			continue
		}
		last = max(last, f.StartTime+f.FCT)
		fcts = append(fcts, f.FCT)
	}
	if m.Flows > 0 && m.Unfinished == 0 && last > 0 {
		end = last // the sized flows' goodput until the last one completed
	}
	if end > 0 {
		m.Throughput = float64(delivered) * 8 / end.Seconds()
	}
	// The finished flows' percentiles, by the simulator's own nearest rank
	// (sim.Percentile, what simulate reports); unfinished flows are
	// counted apart and rank first.
	if len(fcts) > 0 {
		m.P99FCT = time.Duration(sim.Percentile(fcts, 99) / sim.Nanosecond)
		m.MedianFCT = time.Duration(sim.Percentile(fcts, 50) / sim.Nanosecond)
	}
	for _, p := range res.Ports {
		m.Drops += p.Drops
		if p.Lossless {
			m.LosslessDrops += p.Drops
			m.PauseTime += time.Duration(p.PausedTime / sim.Nanosecond)
		}
	}
	return m
}

func (r *Result) score(s Setting, runs []*sim.Result) *Score {
	sc := &Score{Setting: s}
	for i, res := range runs {
		m := measure(r.scenarios[i].spec, res)
		sc.Runs = append(sc.Runs, m)
		sc.Drops += m.LosslessDrops
		sc.Unfinished += m.Unfinished
		sc.PauseTime += m.PauseTime
		sc.Throughput += m.Throughput
		if base := r.scenarios[i].base; base > 0 && m.P99FCT > 0 {
			sc.FCT += float64(m.P99FCT) / float64(base)
		} else {
			sc.FCT++
		}
	}
	sc.FCT /= float64(max(len(runs), 1))
	return sc
}

// Search tunes f's RoCE class for the scenarios: a coarse grid over the
// ECN thresholds and probability, then a local search over every
// parameter (one level up and down each, the best neighbour taken while it
// improves), simulating each setting on every scenario. The settings of a
// round run in parallel; the result is the same for a seed whatever
// Parallel is, and ctx cancels it.
func Search(ctx context.Context, f *intent.Fabric, o Options) (*Result, error) {
	if len(o.Scenarios) == 0 {
		return nil, errors.New("no scenario: give at least one --scenario")
	}
	cl, err := RoCEClass(f, o.Class)
	if err != nil {
		return nil, err
	}
	if o.Seed == 0 {
		o.Seed = sim.DefaultSeed
	}
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
	}
	if o.Size <= 0 {
		o.Size = DefaultSize
	}
	o.Parallel = max(o.Parallel, 1)
	r := &Result{Class: cl.Name, Seed: o.Seed, fabric: f, class: cl, opts: o, DCQCN: o.DCQCN}
	r.Bounds = boundsOf(f, cl)
	r.Base = baseSetting(f, cl)
	if sh := r.Bounds.Shared; sh != nil {
		r.Notes = append(r.Notes, fmt.Sprintf("SONiC 202405/202411 switches give every ECN class one WRED profile with the earliest marking (FC128): the search keeps class %s at or before class %s's min %s, max %s, probability %d%%, and simulates every setting, the intent's too, as they program it",
			cl.Name, strings.Join(sh.Classes, ", "), intent.FormatSize(sh.MinBytes), intent.FormatSize(sh.MaxBytes), sh.Probability))
	}
	for _, spec := range o.Scenarios {
		sc, err := sim.ParseSpec(spec)
		if err != nil {
			return nil, err
		}
		if len(sc.Flows) == 0 {
			sc.Size = o.Size
		}
		sc.Class = cl.Name
		if sc.Seed != 0 && sc.Seed != o.Seed {
			r.Notes = append(r.Notes, fmt.Sprintf("scenario %s: its seed %d is replaced by the search's %d", spec, sc.Seed, o.Seed))
		}
		r.scenarios = append(r.scenarios, &scenario{spec: spec, sc: sc})
	}
	// The intent as it is, long enough for its flows to finish: the time
	// of the search runs and the FCTs the others are measured against.
	probe := o.Duration
	if probe == 0 {
		probe = ProbeDuration
	}
	runs, err := r.run(r.Base, probe, searchSamples)
	if err != nil {
		return nil, err
	}
	var last time.Duration
	for i, res := range runs {
		m := measure(r.scenarios[i].spec, res)
		if m.Flows == 0 {
			return nil, fmt.Errorf("scenario %s: no flow has a size, so there is no completion time to tune for (give flows a size)", r.scenarios[i].spec)
		}
		if m.Unfinished > 0 && o.Duration == 0 {
			return nil, fmt.Errorf("scenario %s: %d of %d flows do not finish in %s with the intent as it is: give a longer --duration or smaller --size", r.scenarios[i].spec, m.Unfinished, m.Flows, probe)
		}
		r.scenarios[i].base = m.P99FCT
		for _, fr := range res.Flows {
			if fr.FCT > 0 {
				last = max(last, time.Duration((fr.StartTime+fr.FCT)/sim.Nanosecond))
			}
		}
		if res.Synthetic && i == 0 {
			r.Notes = append(r.Notes, res.Notes...)
		}
	}
	r.Duration = o.Duration
	if r.Duration == 0 {
		r.Duration = max(2*last, last+200*time.Microsecond).Round(10 * time.Microsecond)
	}
	cache := map[Setting]*Score{}
	eval := func(ss []Setting) ([]*Score, error) {
		var todo []Setting
		for _, s := range ss {
			if _, ok := cache[s]; !ok && !slices.Contains(todo, s) {
				todo = append(todo, s)
			}
		}
		out := make([]*Score, len(todo))
		errs := make([]error, len(todo))
		next := make(chan int)
		var wg sync.WaitGroup
		for range min(o.Parallel, len(todo)) {
			wg.Go(func() {
				for i := range next {
					runs, err := r.run(todo[i], r.Duration, searchSamples)
					if err != nil {
						errs[i] = err
						continue
					}
					out[i] = r.score(todo[i], runs)
				}
			})
		}
	feed:
		for i := range todo {
			select {
			case next <- i:
			case <-ctx.Done():
				break feed
			}
		}
		close(next)
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		for i, s := range todo {
			cache[s] = out[i]
		}
		r.Evaluated += len(todo)
		res := make([]*Score, len(ss))
		for i, s := range ss {
			res[i] = cache[s]
		}
		return res, nil
	}
	before, err := eval([]Setting{r.Base})
	if err != nil {
		return nil, err
	}
	r.Before = before[0]
	// The intent's own mode, then (Modes) every other mode its platforms
	// compile, in intent.Modes' order: each searched within the budget.
	modes := []ModeResult{{Mode: r.Base.Mode, Bounds: r.Bounds}}
	if o.Modes {
		for _, name := range intent.Modes() {
			m := intent.RoCEMode(name)
			if m == r.Base.Mode {
				continue
			}
			mr := ModeResult{Mode: m, Refused: Refusal(f, m)}
			if mr.Refused == "" {
				g, err := withMode(f, cl, m)
				if err != nil {
					return nil, err
				}
				mr.Bounds = boundsOf(g, cl)
			}
			modes = append(modes, mr)
		}
	}
	var best *Score
	for i := range modes {
		mr := &modes[i]
		if mr.Refused != "" {
			continue
		}
		n0, from := r.Evaluated, (*Score)(nil)
		if i == 0 {
			// the intent's setting, simulated above, is its mode's, and
			// the local search starts from it when no setting of the
			// grid is inside the bounds
			n0, from = n0-1, r.Before
		}
		if mr.Best, err = r.searchMode(mr.Mode, mr.Bounds, o, eval, cache, n0, from); err != nil {
			return nil, err
		}
		mr.Evaluated = r.Evaluated - n0
		if mr.Evaluated >= o.Budget {
			if o.Modes {
				r.Notes = append(r.Notes, fmt.Sprintf("mode %s: the search stopped at its budget of %d settings (--budget)", mr.Mode, o.Budget))
			} else {
				r.Notes = append(r.Notes, fmt.Sprintf("the search stopped at its budget of %d settings (--budget)", o.Budget))
			}
		}
		// in the modes' order: ties keep the earlier, the intent's first
		if mr.Best != nil && (best == nil || better(mr.Best, best)) {
			best = mr.Best
		}
	}
	if o.Modes {
		r.Modes = modes
	}
	if best == nil || !better(best, r.Before) {
		best = r.Before
	}
	r.After, r.Best = best, best.Setting
	r.Edits = r.Best.Edits(&f.Policy, cl, r.Base, o.DCQCN)
	if r.Best == r.Base {
		r.Edits = nil
	}
	return r, nil
}

// searchMode searches mode m within bounds b: a coarse grid over the ECN
// thresholds and probability (DCQCN as the intent has it), then the
// neighbours of the best, two levels away on each parameter then one,
// while a round finds a better one; at most o.Budget settings counted from
// n0 of r.Evaluated (cache: the settings simulated so far). pfc-only
// marks nothing: its one setting is the intent's DCQCN without ECN. It
// returns the best setting inside b, else from, where the local search
// then starts (nil when there is neither).
func (r *Result) searchMode(m intent.RoCEMode, b Bounds, o Options, eval func([]Setting) ([]*Score, error), cache map[Setting]*Score, n0 int, from *Score) (*Score, error) {
	left := func() int { return o.Budget - (r.Evaluated - n0) }
	base := r.Base
	base.Mode = m
	if !m.ECN() {
		base.Kmin, base.Kmax, base.Pmax = 0, 0, 0
	}
	// best is the best setting inside the bounds: the mode's base (the
	// intent's setting in that mode), unless it is outside them (then the
	// first of the grid to beat the others, which the local search starts
	// from and which must beat the intent's in the end)
	var best *Score
	if b.Check(base) == nil && left() > 0 {
		sc, err := eval([]Setting{base})
		if err != nil {
			return nil, err
		}
		best = sc[0]
	}
	if !m.ECN() {
		return best, nil
	}
	consider := func(scores []*Score) {
		for _, sc := range scores { // in the order given: ties keep the earlier
			if best == nil || better(sc, best) {
				best = sc
			}
		}
	}
	ds := dims(b, base, o.DCQCN)
	// the coarse grid: ECN thresholds and probability, DCQCN as it is
	var grid []Setting
	for _, i := range ds[0].coarse {
		for _, j := range ds[1].coarse {
			for _, k := range ds[2].coarse {
				s := base
				ds[0].set(&s, ds[0].levels[i])
				ds[1].set(&s, ds[1].levels[j])
				ds[2].set(&s, ds[2].levels[k])
				if b.Check(s) == nil {
					grid = append(grid, s)
				}
			}
		}
	}
	if len(grid) > left() {
		grid = grid[:max(left(), 0)]
	}
	scores, err := eval(grid)
	if err != nil {
		return nil, err
	}
	consider(scores)
	if best == nil {
		best = from
	}
	if best == nil {
		return nil, nil
	}
	// local refinement
	for _, step := range []int{2, 1} {
		for left() > 0 {
			var ns []Setting
			for _, d := range ds {
				at := nearest(d.levels, d.get(best.Setting))
				for _, k := range []int{at - step, at + step} {
					if k < 0 || k >= len(d.levels) {
						continue
					}
					s := best.Setting
					d.set(&s, d.levels[k])
					if _, seen := cache[s]; !seen && b.Check(s) == nil && !slices.Contains(ns, s) {
						ns = append(ns, s)
					}
				}
			}
			if len(ns) == 0 {
				break
			}
			if len(ns) > left() {
				ns = ns[:left()]
			}
			scores, err := eval(ns)
			if err != nil {
				return nil, err
			}
			was := best
			consider(scores)
			if best == was {
				break
			}
		}
	}
	return best, nil
}

// Runs simulates the intent's setting and the tuned one on every scenario
// with the search's time and seed and samples: the runs the before/after
// plots come from.
func (r *Result) Runs() (before, after []*sim.Result, err error) {
	if before, err = r.run(r.Base, r.Duration, 0); err != nil {
		return nil, nil, err
	}
	after, err = r.run(r.Best, r.Duration, 0)
	return before, after, err
}

// Scenarios are the searched scenario specs.
func (r *Result) Scenarios() []string {
	var out []string
	for _, s := range r.scenarios {
		out = append(out, s.spec)
	}
	return out
}

// String describes s as the intent writes it (its mode where it is not
// the default, lossless).
func (s Setting) String() string {
	if !s.Mode.ECN() {
		return "mode " + string(s.Mode)
	}
	var b strings.Builder
	if s.Mode != intent.ModeLossless && s.Mode != "" {
		fmt.Fprintf(&b, "mode %s, ", s.Mode)
	}
	fmt.Fprintf(&b, "ecn {min: %s, max: %s, probability: %d%%}", intent.FormatSize(s.Kmin), intent.FormatSize(s.Kmax), s.Pmax)
	return b.String()
}
