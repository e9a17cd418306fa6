package hostdrv

import "testing"

// What the external tests (package hostdrv_test) use of this package's
// test doubles. They are external because they import internal/sim, which
// imports intent/check, which imports hostdrv.

// NewRig is the mlx5 host test double: the fake kernel and a temp tree
// with the given ECN control ("debugfs" or "sysfs"), rdma_cm configfs.
func NewRig(t testing.TB, ecn string) (*Driver, string) {
	r := newRig(t, treeOpts{ecn: ecn, configfs: true})
	return r.d, r.files.Root
}

// LoadIntent is this package's test intent (host gpu1, two mlx5 NICs)
// with edit applied to its text.
var LoadIntent = loadIntent

// WithDCQCN is the edit that adds the tests' policy.dcqcn block
// (dcqcntest.Policy) to LoadIntent's intent.
var WithDCQCN = withDCQCN
