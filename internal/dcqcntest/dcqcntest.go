// Package dcqcntest holds the policy.dcqcn block the tests of hostdrv
// (written to the NIC test doubles, read back, drift-checked) and of
// internal/sim (what simulate runs) put into their intents: one block, so
// that "simulate runs what the hosts get" is tested on the same values
// everywhere.
package dcqcntest

// Policy is a policy.dcqcn block, indented as a key of policy (two
// spaces), that moves every parameter but gd off mlx5's defaults (and
// off the test doubles' firmware values): a test that reads one back
// reads the intent's, never a default. In the NIC's units (mlx5
// cong.c): times in microseconds, rates in Mb/s, g and initialAlpha in
// 1/1024.
const Policy = `  dcqcn:
    rateReduceMonitorPeriod: 50us
    timeReset: 55us
    byteReset: 10MB
    threshold: 5
    aiRate: 40M
    haiRate: 200M
    minDecreaseFactor: 25%
    minRate: 10M
    rateOnFirstCNP: 25G
    g: 1020
    alphaUpdatePeriod: 55us
    initialAlpha: 512
    clampTargetRate: true
    clampTargetRateAfterTimeIncrease: false
    minTimeBetweenCNPs: 8us
`

// Fields is how many parameters Policy sets: every policy.dcqcn field
// but gd, which the simulator does not model.
const Fields = 15
