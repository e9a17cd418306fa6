package switchdrv_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv"
)

// BenchmarkLockSwitches is what `fabricctl apply` spends on its per-switch
// locks (LockSwitches and Unlock) for 200 switches, the size of
// BenchmarkApplyCost, whose fabricctl side takes them: their share of its
// cpu-ms/switch, which the machine's noise hides between two runs of it.
// The lock files exist after the first iteration, as on a machine that has
// applied before.
//
//	go test -run '^$' -bench 'LockSwitches$' ./switchdrv
func BenchmarkLockSwitches(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "locks")
	sws := make([]*intent.Switch, 200)
	for i := range sws {
		sws[i] = &intent.Switch{Name: fmt.Sprintf("leaf%d", i), Address: fmt.Sprintf("127.0.0.1:%d", 20000+i)}
	}
	for b.Loop() {
		l, err := switchdrv.LockSwitches(dir, "bench", sws)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Unlock(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(sws))/1000, "ms/switch")
}
