package sim

import (
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/intent"
)

const minimalIntent = `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: t}
policy:
  preset: roce-lossless
`

func parse(t testing.TB, src string) *intent.Fabric {
	t.Helper()
	f, err := intent.Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return f
}

func run(t testing.TB, f *intent.Fabric, spec string, so StarOptions, opt Options) *Result {
	t.Helper()
	sc, err := ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	return runSc(t, f, sc, so, opt)
}

func runSc(t testing.TB, f *intent.Fabric, sc *Scenario, so StarOptions, opt Options) *Result {
	t.Helper()
	n, err := Build(f, sc, so, opt.Seed)
	if err != nil {
		t.Fatal(err)
	}
	r := New(n, opt).Run()
	if !r.Conservation.Holds() {
		t.Fatalf("conservation broken: %+v", r.Conservation)
	}
	return r
}

func dumpPorts(t testing.TB, r *Result) {
	for _, p := range r.Ports {
		t.Logf("%s/%d q=%d mean=%.0f paused=%v xoff=%d/%d xon=%d/%d marks=%d drops=%d tx=%d wd=%d", p.Name(), p.Priority, p.MaxQueue, p.MeanQueue, time.Duration(p.PausedTime/1000), p.PauseSent, p.PauseRecv, p.ResumeSent, p.ResumeRecv, p.ECNMarks, p.Drops, p.TxFrames, p.WatchdogTriggers)
	}
}

func dumpRates(t testing.TB, r *Result, every int) {
	for i := 0; i < len(r.Times); i += every {
		line := ""
		for _, s := range r.Rates {
			line += " " + intent.FormatRate(int64(s.Values[i]))
		}
		q := 0.0
		if len(r.Queues) > 0 {
			q = r.Queues[0].Values[i]
		}
		t.Logf("t=%v q=%.0f jain=%.3f rates%s", time.Duration(r.Times[i]/1000), q, r.JainAt[i], line)
	}
}
