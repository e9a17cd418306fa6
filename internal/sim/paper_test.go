package sim

import (
	"testing"
	"time"
)

const paperIntent = `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: t}
policy:
  preset: roce-lossless
  classes:
    - name: roce
      ecn: {min: 5KB, max: 200KB, probability: 1%}
`

func TestPaperSmoke(t *testing.T) {
	f := parse(t, paperIntent)
	p := PaperParams()
	r := run(t, f, "incast:2:1", StarOptions{}, Options{Duration: 5 * time.Millisecond, DCQCN: &p})
	dumpPorts(t, r)
	dumpRates(t, r, 10)
}
