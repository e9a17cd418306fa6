package switchdrv_test

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"testing"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"golang.org/x/sync/errgroup"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/yangcheck"
	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/srl"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

const benchIntent = `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: bench}
policy: {preset: roce-lossless}
inventory:
  switches:
    - name: leaf{1..%[1]d}
      platform: srlinux
      address: "127.0.0.1:{10001..%[2]d}"
      tls: {insecure: true}
      portDefaults: {speed: 400G, cable: 3m}
      ports:
        - name: ethernet-1/{1..32}
`

// BenchmarkApply200 plans and applies, as `fabricctl apply` without a saved
// plan does, the real SR Linux compiler's output
// (32 ports per switch) to 200 device twins over loopback gRPC: the cost of
// `fabricctl apply` on a fresh fabric, per switch. The twins run in the
// same process, so the figure includes the server side too.
//
//	go test -run '^$' -bench Apply200 -benchtime 1x -benchmem ./switchdrv/
func BenchmarkApply200(b *testing.B) {
	f, twins, eng := benchFabric(b, 200)
	eng.NoPayload = true // as `fabricctl apply` plans for itself
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		resetTwins(b, f, twins)
		b.StartTimer()
		p, err := eng.Plan(b.Context(), f, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := switchdrv.Errors(p); err != nil {
			b.Fatal(err)
		}
		res, err := eng.Apply(b.Context(), f, p)
		if err != nil {
			b.Fatal(err)
		}
		if res.Status != "applied" {
			b.Fatalf("status %s", res.Status)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(twins))/1000, "ms/switch")
}

// BenchmarkDiff200 is the drift check of 200 in-sync switches (what a
// GitOps job runs every hour): one Capabilities and one Get per switch.
//
//	go test -run '^$' -bench Diff200 -benchtime 1x -benchmem ./switchdrv/
func BenchmarkDiff200(b *testing.B) {
	f, twins, eng := benchFabric(b, 200)
	p, err := eng.Plan(b.Context(), f, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := eng.Apply(b.Context(), f, p); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		p, err := eng.Plan(b.Context(), f, nil)
		if err != nil {
			b.Fatal(err)
		}
		if p.HasChanges() || p.HasErrors() {
			b.Fatalf("drift or errors right after apply: %v", switchdrv.Errors(p))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(twins))/1000, "ms/switch")
}

func benchFabric(b *testing.B, n int) (*intent.Fabric, []*twin.Twin, *switchdrv.Engine) {
	b.Helper()
	f, err := intent.Parse("bench.yaml", fmt.Appendf(nil, benchIntent, n, 10000+n))
	if err != nil {
		b.Fatal(err)
	}
	twins := make([]*twin.Twin, n)
	for i := range f.Switches {
		sw := &f.Switches[i]
		tw, err := twin.Start(twin.Options{Name: sw.Name, Platform: intent.PlatformSRLinux, CellBytes: 256})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(tw.Close)
		twins[i] = tw
		sw.Address = tw.Addr()
		if err := tw.Apply(baseConfig(f, sw)); err != nil {
			b.Fatal(err)
		}
	}
	reg := switchdrv.NewRegistry()
	if err := srl.Register(reg); err != nil {
		b.Fatal(err)
	}
	// As `fabricctl plan/apply/diff` build it: compared with the YANG
	// defaults of the platform's models filled in (cmd/fabricctl's
	// yangDefaults). The schema is loaded once per process; it is loaded
	// here, before any timing.
	if _, err := yangcheck.Platform(intent.PlatformSRLinux); err != nil {
		b.Fatal(err)
	}
	eng := &switchdrv.Engine{Registry: reg, BackupDir: b.TempDir(), Parallel: 32,
		Transport: transport.Options{Timeout: 30 * time.Second}, Defaults: yangDefaults}
	return f, twins, eng
}

// baseConfig is the operator's base configuration of an SR Linux switch
// that fabricctl does not write: each port's routed subinterface, which
// the DSCP classifier attaches to (without it the plan lacks it and
// refuses the switch).
func baseConfig(f *intent.Fabric, sw *intent.Switch) *gnmipb.SetRequest {
	base := &gnmipb.SetRequest{}
	for _, port := range sw.Ports {
		base.Update = append(base.Update, &gnmipb.Update{
			Path: &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "interface", Key: map[string]string{"name": port.Name}}}},
			Val: &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: fmt.Appendf(nil,
				`{"name":%q,"admin-state":"enable","subinterface":[{"index":%d,"type":"srl_nokia-interfaces:routed","admin-state":"enable","ip-mtu":%d}]}`,
				port.Name, port.Subinterface, f.PortMTU(port))}},
		})
	}
	return base
}

// resetTwins puts every twin back to its base configuration: fabricctl's
// subtrees deleted, the ports' subinterfaces there.
func resetTwins(b *testing.B, f *intent.Fabric, twins []*twin.Twin) {
	qos, _ := transport.ParsePath("/qos")
	iface, _ := transport.ParsePath("/interface")
	for i, tw := range twins {
		_ = tw.Delete(qos)
		_ = tw.Delete(iface)
		if err := tw.Apply(baseConfig(f, &f.Switches[i])); err != nil {
			b.Fatal(err)
		}
	}
}

// yangDefaults is cmd/fabricctl's Engine.Defaults.
func yangDefaults(p intent.Platform) (switchdrv.DefaultsFiller, error) {
	s, err := yangcheck.Platform(p)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// applyCost is the set-up BenchmarkApplyCost and its one-sided variants
// share: n SR Linux twins, their SetRequests and owned paths compiled
// beforehand (for the hand-written clients), and the three ways of
// applying them.
type applyCost struct {
	b     *testing.B
	f     *intent.Fabric
	twins []*twin.Twin
	eng   *switchdrv.Engine
	reqs  []*gnmipb.SetRequest
	paths [][]*gnmipb.Path
	// lockDir holds the per-switch lock files fabricctl's side takes.
	lockDir string
}

func newApplyCost(b *testing.B, n int) *applyCost {
	f, twins, eng := benchFabric(b, n)
	a := &applyCost{b: b, f: f, twins: twins, eng: eng, lockDir: b.TempDir(),
		reqs: make([]*gnmipb.SetRequest, len(f.Switches)), paths: make([][]*gnmipb.Path, len(f.Switches))}
	for i := range f.Switches {
		sw := &f.Switches[i]
		p, err := eng.Registry.Lookup(sw.Platform)
		if err != nil {
			b.Fatal(err)
		}
		d, err := p.Compile(f, sw)
		if err != nil {
			b.Fatal(err)
		}
		a.reqs[i] = d.SetRequest()
		for _, u := range append(append([]*gnmipb.Update{}, d.Replaces...), d.Updates...) {
			a.paths[i] = append(a.paths[i], u.GetPath())
		}
	}
	return a
}

// reset puts every twin back to its base configuration (what each run
// starts from).
func (a *applyCost) reset() { resetTwins(a.b, a.f, a.twins) }

// fabricctl plans and applies as `fabricctl apply` without a saved plan
// runs it (cmd/fabricctl/apply.go): a new engine, the switches selected
// and each one's lock taken (switchdrv.LockSwitches: a flock'd file per
// switch address) before the plan's read and released after the apply,
// the plan shown as text, then applied.
func (a *applyCost) fabricctl() {
	b, eng := a.b, a.eng
	e := &switchdrv.Engine{Registry: eng.Registry, BackupDir: eng.BackupDir, Parallel: eng.Parallel, Transport: eng.Transport,
		Defaults: eng.Defaults, NoPayload: true}
	defer e.Close()
	sws, err := switchdrv.Select(a.f, nil)
	if err != nil {
		b.Fatal(err)
	}
	lock, err := switchdrv.LockSwitches(a.lockDir, a.f.Name, sws)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := lock.Unlock(); err != nil {
			b.Fatal(err)
		}
	}()
	p, err := e.Plan(b.Context(), a.f, nil)
	if err != nil || switchdrv.Errors(p) != nil {
		b.Fatal(err, switchdrv.Errors(p))
	}
	if err := plan.WriteText(io.Discard, p); err != nil {
		b.Fatal(err)
	}
	if _, err := e.Apply(b.Context(), a.f, p); err != nil {
		b.Fatal(err)
	}
}

// client is the hand-written client: per switch one connection and the
// Set, with verified a Get of the owned paths before and after it.
func (a *applyCost) client(verified bool) {
	ctx := a.b.Context()
	a.eachSwitch(func(i int, c *transport.Client) error {
		if verified {
			if _, err := c.GetConfig(ctx, a.paths[i]); err != nil {
				return err
			}
		}
		if _, err := c.Set(ctx, a.reqs[i]); err != nil {
			return err
		}
		if !verified {
			return nil
		}
		_, err := c.GetConfig(ctx, a.paths[i])
		return err
	})
}

// lean is the minimal client with the transport calls fabricctl's engine
// makes: the Get of the owned paths marshalled once (PrepareGetConfig) for
// both reads, their replies read by GetPrepared (an update's path that
// repeats an asked one is not decoded), and the Set's reply only checked
// (SetOutcome). client(true) decodes every reply as a stock gNMI client
// does; the difference between the two is what decoding less saves,
// which fabricctl's figure against the minimal client includes.
func (a *applyCost) lean() {
	ctx := a.b.Context()
	a.eachSwitch(func(i int, c *transport.Client) error {
		get, err := c.PrepareGetConfig(a.paths[i])
		if err != nil {
			return err
		}
		if _, err := c.GetPrepared(ctx, get); err != nil {
			return err
		}
		if err := c.SetOutcome(ctx, a.reqs[i]); err != nil {
			return err
		}
		_, err = c.GetPrepared(ctx, get)
		return err
	})
}

// eachSwitch runs fn for every switch on a connection of its own, dialled
// for it and closed after, Parallel at once, as the hand-written clients
// connect.
func (a *applyCost) eachSwitch(fn func(i int, c *transport.Client) error) {
	b := a.b
	var g errgroup.Group
	g.SetLimit(a.eng.Parallel)
	for i := range a.f.Switches {
		g.Go(func() error {
			c, err := transport.Dial(b.Context(), a.f.Switches[i], a.eng.Transport)
			if err != nil {
				return err
			}
			defer c.Close()
			return fn(i, c)
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
}

// staged is the minimal client in fabricctl's two stages: every switch is
// read (one connection each, kept) before any is written, then each gets
// its Set and the verifying Get; the connections are closed at the end.
// The same RPCs as client(true), in the order a safe apply needs (a plan
// of the whole fabric, then the backups of all switches before the first
// write), with nothing decoded, compared or kept.
func (a *applyCost) staged() {
	b := a.b
	var g errgroup.Group
	g.SetLimit(a.eng.Parallel)
	cs := make([]*transport.Client, len(a.f.Switches))
	defer func() {
		var closing errgroup.Group
		closing.SetLimit(a.eng.Parallel)
		for _, c := range cs {
			if c != nil {
				closing.Go(c.Close)
			}
		}
		_ = closing.Wait()
	}()
	for i := range a.f.Switches {
		g.Go(func() error {
			c, err := transport.Dial(b.Context(), a.f.Switches[i], a.eng.Transport)
			if err != nil {
				return err
			}
			cs[i] = c
			_, err = c.GetConfig(b.Context(), a.paths[i])
			return err
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	for i := range a.f.Switches {
		g.Go(func() error {
			if _, err := cs[i].Set(b.Context(), a.reqs[i]); err != nil {
				return err
			}
			_, err := cs[i].GetConfig(b.Context(), a.paths[i])
			return err
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkApplyCost compares, on the same 200 twins and per iteration,
// fabricctl's plan + apply (as `fabricctl apply` without a saved plan runs
// them: YANG defaults filled for the comparisons, the plan rendered as
// text, the run's one backup file written and synced) with two
// hand-written clients that get the same SetRequests (compiled beforehand,
// outside the timing):
//
//   - minimal: the least a verified apply needs: one connection, a Get of
//     the owned paths (the basis and backup), the Set, a Get to verify;
//   - bare: one connection and the Set, nothing read;
//   - staged: the minimal client's RPCs in fabricctl's two stages, every
//     switch read before any is written (staged);
//   - lean: the minimal client with fabricctl's transport calls (one
//     marshalled Get for both reads, replies decoded only as far as
//     fabricctl's engine decodes them).
//
// It reports x_minimal, x_bare, x_staged and x_lean, fabricctl's time over
// theirs (goal: x_minimal <= 1.3); x_staged is what fabricctl itself adds
// to a safe apply's RPCs, staged_x_minimal what the two stages cost, and
// lean_x_minimal what the minimal client would save by decoding as little
// as fabricctl does (so x_lean is fabricctl against a client that decodes
// no more than it). The twins
// run in this process, so the server side is in every figure.
// faults/switch and min-faults/switch are the pages fabricctl's and the
// minimal client's heaps grew into (see measure). BenchmarkApplyCostSide
// runs one side alone, for profiles, for counting instructions
// (tools/applycost-callgrind) and for each side once in a new process
// (tools/applycost-fresh).
//
//	go test -run '^$' -bench 'ApplyCost$' -benchtime 3x ./switchdrv/
func BenchmarkApplyCost(b *testing.B) {
	a := newApplyCost(b, 200)
	twins := a.twins
	// What each side allocates (the process: client and twins) does not
	// swing with the machine's load as time does.
	var ms runtime.MemStats
	allocated := func() (bytes, objects uint64) {
		runtime.ReadMemStats(&ms)
		return ms.TotalAlloc, ms.Mallocs
	}
	// measure runs one side from empty twins and, as a new process starts,
	// with a collected heap whose free memory went back to the system: so
	// each side touches (page-faults) the memory its own heap grows into.
	// With only runtime.GC(), the heap kept the pages the side before had
	// needed: the minimal client, run after fabricctl, took 0.4 page faults
	// per switch inside fabricctl's larger heap, against 175-200 in a process
	// of its own, and fabricctl, after it, about 110 against 290-310 (2026-12-03).
	// Timed by b's timer too when timed (fabricctl's, so that ns/op is its).
	type sample struct {
		wall, cpu      time.Duration
		bytes, objects uint64
		faults         int64
	}
	measure := func(run func(), timed bool) sample {
		a.reset()
		debug.FreeOSMemory()
		b0, o0 := allocated()
		if timed {
			b.StartTimer()
		}
		start, u0 := time.Now(), usage()
		run()
		u1 := usage()
		s := sample{wall: time.Since(start), cpu: u1.cpu - u0.cpu, faults: u1.faults - u0.faults}
		if timed {
			b.StopTimer()
		}
		b1, o1 := allocated()
		s.bytes, s.objects = b1-b0, o1-o0
		return s
	}
	var sF, sM, sB, sS, sL sample
	add := func(sum *sample, s sample) {
		sum.wall, sum.cpu, sum.bytes, sum.objects, sum.faults = sum.wall+s.wall, sum.cpu+s.cpu, sum.bytes+s.bytes, sum.objects+s.objects, sum.faults+s.faults
	}
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		add(&sF, measure(a.fabricctl, true))
		add(&sM, measure(func() { a.client(true) }, false))
		add(&sB, measure(func() { a.client(false) }, false))
		add(&sS, measure(a.staged, false))
		add(&sL, measure(a.lean, false))
		b.StartTimer()
	}
	b.ReportMetric(float64(sF.wall)/float64(sM.wall), "x_minimal")
	b.ReportMetric(float64(sF.wall)/float64(sB.wall), "x_bare")
	b.ReportMetric(float64(sF.cpu)/float64(sM.cpu), "x_minimal_cpu")
	b.ReportMetric(float64(sF.cpu)/float64(sB.cpu), "x_bare_cpu")
	b.ReportMetric(float64(sF.wall)/float64(sS.wall), "x_staged")
	b.ReportMetric(float64(sF.cpu)/float64(sS.cpu), "x_staged_cpu")
	b.ReportMetric(float64(sS.cpu)/float64(sM.cpu), "staged_x_minimal_cpu")
	b.ReportMetric(float64(sF.wall)/float64(sL.wall), "x_lean")
	b.ReportMetric(float64(sF.cpu)/float64(sL.cpu), "x_lean_cpu")
	b.ReportMetric(float64(sL.cpu)/float64(sM.cpu), "lean_x_minimal_cpu")
	b.ReportMetric(float64(sF.wall.Microseconds())/float64(b.N*len(twins))/1000, "ms/switch")
	// CPU per switch (the process: client and twins) of fabricctl and of
	// the minimal client.
	b.ReportMetric(float64(sF.cpu.Microseconds())/float64(b.N*len(twins))/1000, "cpu-ms/switch")
	b.ReportMetric(float64(sM.cpu.Microseconds())/float64(b.N*len(twins))/1000, "min-cpu-ms/switch")
	// Allocated per switch by fabricctl and the minimal client, and the
	// ratios.
	b.ReportMetric(float64(sF.bytes)/float64(b.N*len(twins))/1e6, "MB/switch")
	b.ReportMetric(float64(sM.bytes)/float64(b.N*len(twins))/1e6, "min-MB/switch")
	b.ReportMetric(float64(sF.bytes)/float64(sM.bytes), "x_minimal_bytes")
	b.ReportMetric(float64(sF.objects)/float64(sM.objects), "x_minimal_allocs")
	// Pages each side's heap grew into (minor faults of the process), per
	// switch: the memory it needed at its peak, paid in kernel time.
	b.ReportMetric(float64(sF.faults)/float64(b.N*len(twins)), "faults/switch")
	b.ReportMetric(float64(sM.faults)/float64(b.N*len(twins)), "min-faults/switch")
}

// rusage is what the process has used: CPU time (user and system, client
// and twins) and minor page faults.
type rusage struct {
	cpu    time.Duration
	faults int64
}

// usage reads the process's rusage. Wall time is what a user waits for,
// but on a loaded machine it swings; CPU time is steadier.
func usage() rusage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return rusage{cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), faults: ru.Minflt}
}

// BenchmarkApplyCostSide runs one side of BenchmarkApplyCost alone, each
// iteration from empty twins (the reset is outside the timing but in the
// process): fabricctl, minimal, bare, staged or lean, on FABRICCTL_BENCH_SWITCHES twins
// (default 200). Instruction counts of it under callgrind are the steady
// referee of x_minimal on this noisy machine:
// tools/applycost-callgrind runs it at two iteration counts per side and
// divides the differences; tools/applycost-fresh runs each side once in a
// new process, as a user meets them. Besides wall time it reports the
// process's CPU time and minor page faults per switch.
//
//	go test -run '^$' -bench 'ApplyCostSide/fabricctl' -benchtime 3x ./switchdrv/
func BenchmarkApplyCostSide(b *testing.B) {
	n := 200
	if s := os.Getenv("FABRICCTL_BENCH_SWITCHES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			b.Fatalf("FABRICCTL_BENCH_SWITCHES=%q: want a positive number", s)
		}
		n = v
	}
	for _, side := range []string{"fabricctl", "minimal", "bare", "staged", "lean"} {
		b.Run(side, func(b *testing.B) {
			a := newApplyCost(b, n)
			run := map[string]func(){"fabricctl": a.fabricctl, "minimal": func() { a.client(true) }, "bare": func() { a.client(false) }, "staged": a.staged, "lean": a.lean}[side]
			var used rusage
			for b.Loop() {
				b.StopTimer()
				a.reset()
				b.StartTimer()
				u0 := usage()
				run()
				u1 := usage()
				used.cpu, used.faults = used.cpu+u1.cpu-u0.cpu, used.faults+u1.faults-u0.faults
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n)/1000, "ms/switch")
			b.ReportMetric(float64(used.cpu.Microseconds())/float64(b.N*n)/1000, "cpu-ms/switch")
			b.ReportMetric(float64(used.faults)/float64(b.N*n), "faults/switch")
		})
	}
}
