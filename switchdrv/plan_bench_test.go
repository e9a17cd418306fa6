package switchdrv_test

import (
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/plan"
	"github.com/fabricctl/fabricctl/switchdrv"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
)

// planInSync plans the in-sync fabric as `fabricctl plan` (or `diff`, the
// same engine run) does for an output: a new engine, the plan rendered.
// json is `plan -o json` / `--out` / `diff -o json`: the plan with its
// payloads and bases; otherwise `plan -o text` / `diff` without JSON,
// which show neither, so the engine is told (NoPayload) not to build them;
// either way the plan is only shown (ShowOnly).
func (a *applyCost) planInSync(json bool) { a.showInSync(json, false) }

// diffInSync is `fabricctl diff` (text) on the in-sync fabric: the engine
// run as planInSync(false), rendered as a diff.
func (a *applyCost) diffInSync() { a.showInSync(false, true) }

func (a *applyCost) showInSync(json, diff bool) {
	b, eng := a.b, a.eng
	e := &switchdrv.Engine{Registry: eng.Registry, BackupDir: eng.BackupDir, Parallel: eng.Parallel, Transport: eng.Transport,
		Defaults: eng.Defaults, NoPayload: !json, ShowOnly: true}
	defer e.Close()
	p, err := e.Plan(b.Context(), a.f, nil)
	if err != nil || switchdrv.Errors(p) != nil {
		b.Fatal(err, switchdrv.Errors(p))
	}
	if p.HasDrift() {
		b.Fatal("drift on the in-sync fabric")
	}
	write := plan.WriteText
	switch {
	case json:
		write = plan.WriteJSON
	case diff:
		write = plan.WriteDiff
	}
	if err := write(io.Discard, p); err != nil {
		b.Fatal(err)
	}
}

// getOnly is the floor of plan and diff in sync: per switch one
// connection and one Get of the owned paths, its reply decoded as a
// stock gNMI client does, nothing compared.
func (a *applyCost) getOnly() {
	ctx := a.b.Context()
	a.eachSwitch(func(i int, c *transport.Client) error {
		_, err := c.GetConfig(ctx, a.paths[i])
		return err
	})
}

// BenchmarkPlanCost compares, on the same 200 SR Linux twins brought in
// sync once and per iteration (the sides alternated in a rotated order,
// each from a collected heap), `fabricctl plan -o text` (and `diff`, the
// same engine run: the same Capabilities and Get per switch, compile,
// YANG defaults and compare) with the floor: a client that only does the Get of the
// owned paths (getOnly). It reports x_get (wall), x_get_cpu (the
// process's CPU time: client and twins), x_get_bytes and x_get_allocs
// (what each side allocates, which the machine's load does not change);
// goal x_get_cpu <= 1.3. json_x_get_cpu is `plan -o json` (or --out, or
// `diff -o json`), which also encodes every switch's SetRequest and
// hashes its basis. diff_x_get and diff_x_get_cpu are `fabricctl diff`
// (its text), measured as a side of its own.
//
//	go test -run '^$' -bench 'PlanCost$' -benchtime 5x ./switchdrv/
func BenchmarkPlanCost(b *testing.B) {
	a := newApplyCost(b, 200)
	a.reset()
	a.fabricctl() // in sync from here on
	var ms runtime.MemStats
	type sample struct {
		wall, cpu      time.Duration
		bytes, objects uint64
	}
	measure := func(sum *sample, run func(), timed bool) {
		debug.FreeOSMemory()
		runtime.ReadMemStats(&ms)
		b0, o0 := ms.TotalAlloc, ms.Mallocs
		if timed {
			b.StartTimer()
		}
		start, u0 := time.Now(), usage()
		run()
		u1 := usage()
		wall := time.Since(start)
		if timed {
			b.StopTimer()
		}
		runtime.ReadMemStats(&ms)
		sum.wall += wall
		sum.cpu += u1.cpu - u0.cpu
		sum.bytes += ms.TotalAlloc - b0
		sum.objects += ms.Mallocs - o0
	}
	var sT, sJ, sG, sD sample
	// The sides in a rotated order, so that none always follows the
	// heaviest (json).
	sides := []func(){
		func() { measure(&sT, func() { a.planInSync(false) }, true) },
		func() { measure(&sG, a.getOnly, false) },
		func() { measure(&sD, a.diffInSync, false) },
		func() { measure(&sJ, func() { a.planInSync(true) }, false) },
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		for j := range sides {
			sides[(i+j)%len(sides)]()
		}
		b.StartTimer()
	}
	n := float64(b.N * len(a.twins))
	b.ReportMetric(float64(sT.wall)/float64(sG.wall), "x_get")
	b.ReportMetric(float64(sT.cpu)/float64(sG.cpu), "x_get_cpu")
	b.ReportMetric(float64(sT.bytes)/float64(sG.bytes), "x_get_bytes")
	b.ReportMetric(float64(sT.objects)/float64(sG.objects), "x_get_allocs")
	b.ReportMetric(float64(sD.wall)/float64(sG.wall), "diff_x_get")
	b.ReportMetric(float64(sD.cpu)/float64(sG.cpu), "diff_x_get_cpu")
	b.ReportMetric(float64(sJ.cpu)/float64(sG.cpu), "json_x_get_cpu")
	b.ReportMetric(float64(sJ.bytes)/float64(sG.bytes), "json_x_get_bytes")
	b.ReportMetric(float64(sT.cpu.Microseconds())/n/1000, "cpu-ms/switch")
	b.ReportMetric(float64(sG.cpu.Microseconds())/n/1000, "get-cpu-ms/switch")
}

// BenchmarkPlanCostSide runs one side of BenchmarkPlanCost alone (text,
// json, get or diff) on 200 in-sync twins, for profiles and for counting
// instructions under callgrind (tools/plancost-callgrind.sh), the steady
// referee of x_get_cpu on a loaded machine.
//
//	go test -run '^$' -bench 'PlanCostSide/text' -benchtime 3x -cpuprofile cpu.out ./switchdrv/
func BenchmarkPlanCostSide(b *testing.B) {
	n := 200
	if s := os.Getenv("FABRICCTL_BENCH_SWITCHES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			b.Fatalf("FABRICCTL_BENCH_SWITCHES=%q: want a positive number", s)
		}
		n = v
	}
	for _, side := range []string{"text", "json", "get", "diff"} {
		b.Run(side, func(b *testing.B) {
			a := newApplyCost(b, n)
			a.reset()
			a.fabricctl()
			run := map[string]func(){"text": func() { a.planInSync(false) }, "json": func() { a.planInSync(true) }, "get": a.getOnly, "diff": a.diffInSync}[side]
			var used rusage
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				u0 := usage()
				run()
				u1 := usage()
				used.cpu += u1.cpu - u0.cpu
			}
			b.ReportMetric(float64(used.cpu.Microseconds())/float64(b.N*n)/1000, "cpu-ms/switch")
		})
	}
}
