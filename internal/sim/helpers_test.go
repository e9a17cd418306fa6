package sim

import (
	"testing"

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
