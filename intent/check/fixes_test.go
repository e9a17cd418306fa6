package check

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fabricctl/fabricctl/intent"
)

// fixAppliers turn a fix text into the change it describes, the way a user
// would type it in. Each matches the whole fix or does nothing.
var fixAppliers = []struct {
	re    *regexp.Regexp
	apply func(f *intent.Fabric, x Finding, m []string) error
}{
	{regexp.MustCompile(`^add ecn: \{min: (\S+), max: (\S+), probability: 100%\}`), func(f *intent.Fabric, x Finding, m []string) error {
		return setECN(classOf(f, x), m[1], m[2])
	}},
	{regexp.MustCompile(`\(e\.g\. min (\S+), max (\S+)\)$`), func(f *intent.Fabric, x Finding, m []string) error {
		return setECN(classOf(f, x), m[1], m[2])
	}},
	{regexp.MustCompile(`^set min to at least (\S+) \(one MTU\)$`), func(f *intent.Fabric, x Finding, m []string) error {
		n, err := intent.ParseSize(m[1])
		classOf(f, x).ECN.MinBytes = n
		return err
	}},
	{regexp.MustCompile(`^lower ECN max to at most (\S+?)(?: and min below it \(e\.g\. (\S+)\))?, or`), func(f *intent.Fabric, x Finding, m []string) error {
		e := classOf(f, x).ECN
		v, err := intent.ParseSize(m[1])
		if err != nil {
			return err
		}
		e.MaxBytes = v
		if m[2] != "" {
			e.MinBytes, err = intent.ParseSize(m[2])
		}
		return err
	}},
	{regexp.MustCompile(`^use ToS (\d+) `), func(f *intent.Fabric, x Finding, m []string) error {
		f.Policy.RoCE.ToS, _ = strconv.Atoi(m[1])
		return nil
	}},
	{regexp.MustCompile(`^set the host CNP priority to (\d+)$`), func(f *intent.Fabric, x Finding, m []string) error {
		f.Policy.RoCE.CNPPriority, _ = strconv.Atoi(m[1])
		return nil
	}},
	{regexp.MustCompile(`^set the host CNP DSCP to (\d+)`), func(f *intent.Fabric, x Finding, m []string) error {
		f.Policy.RoCE.CNPDSCP, _ = strconv.Atoi(m[1])
		return nil
	}},
	{regexp.MustCompile(`^set poll below \S+ \(e\.g\. (\S+)\)$`), func(f *intent.Fabric, x Finding, m []string) error {
		d, err := time.ParseDuration(m[1])
		f.Policy.Watchdog.Poll = d
		return err
	}},
	{regexp.MustCompile(`^set restore to at least (\S+) `), func(f *intent.Fabric, x Finding, m []string) error {
		d, err := time.ParseDuration(m[1])
		f.Policy.Watchdog.Restore = d
		return err
	}},
	{regexp.MustCompile(`^set globalPause: false$`), func(f *intent.Fabric, x Finding, m []string) error {
		f.Policy.GlobalPause = false
		return nil
	}},
	{regexp.MustCompile(`^set hostMTU to at most (\d+)`), func(f *intent.Fabric, x Finding, m []string) error {
		f.Policy.HostMTU, _ = strconv.Atoi(m[1])
		return nil
	}},
	{regexp.MustCompile(`^use rocePathMTU (\d+),`), func(f *intent.Fabric, x Finding, m []string) error {
		f.Policy.RoCEPathMTU, _ = strconv.Atoi(m[1])
		return nil
	}},
	{regexp.MustCompile(`^write the speed with G: speed: (\S+)$`), func(f *intent.Fabric, x Finding, m []string) error {
		r, err := intent.ParseRate(m[1])
		for i := range f.Switches {
			for j := range f.Switches[i].Ports {
				if p := &f.Switches[i].Ports[j]; p.Speed > 0 && p.Speed < minLineRate {
					p.Speed = r
				}
			}
		}
		for i := range f.Hosts {
			for j := range f.Hosts[i].NICs {
				if n := &f.Hosts[i].NICs[j]; n.Speed > 0 && n.Speed < minLineRate {
					n.Speed = r
				}
			}
		}
		return err
	}},
}

func classOf(f *intent.Fabric, x Finding) *intent.Class {
	name := strings.TrimPrefix(x.Path, "policy.classes[")
	name, _, _ = strings.Cut(name, "]")
	return f.Policy.ClassByName(name)
}

func setECN(cl *intent.Class, min, max string) error {
	lo, err := intent.ParseSize(min)
	if err != nil {
		return err
	}
	hi, err := intent.ParseSize(max)
	if err != nil {
		return err
	}
	cl.ECN = &intent.ECN{MinBytes: lo, MaxBytes: hi, Probability: 100}
	return nil
}

// TestSuggestedFixesPass applies each suggested fix as written and runs
// check again: the finding is gone, and the fix raised no error of any rule
// that was not there before (a fix must pass every other rule for the port).
func TestSuggestedFixesPass(t *testing.T) {
	buffer := func(b int64) func(f *intent.Fabric) {
		return func(f *intent.Fabric) {
			for i := range f.Switches {
				f.Switches[i].BufferBytes = b
			}
		}
	}
	tests := []struct {
		name   string
		mutate func(f *intent.Fabric)
		rule   string
	}{
		{"no ecn, small buffer", func(f *intent.Fabric) { buffer(1_600_000)(f); class(f, "roce").ECN = nil }, "FC109"},
		{"no ecn, tiny buffer", func(f *intent.Fabric) { buffer(400_000)(f); class(f, "roce").ECN = nil }, "FC109"},
		{"no ecn, roomy buffer", func(f *intent.Fabric) { class(f, "roce").ECN = nil }, "FC109"},
		{"kmax above xoff", buffer(1_600_000), "FC111"},
		{"kmax above xoff, kmin above the new kmax", func(f *intent.Fabric) {
			buffer(1_600_000)(f)
			class(f, "roce").ECN.MinBytes = 1_460_000
		}, "FC111"},
		{"kmin above kmax", func(f *intent.Fabric) { class(f, "roce").ECN.MinBytes = 2_000_000 }, "FC110"},
		{"kmin above kmax, small buffer", func(f *intent.Fabric) {
			buffer(1_000_000)(f)
			class(f, "roce").ECN.MinBytes, class(f, "roce").ECN.MaxBytes = 800_000, 700_000
		}, "FC110"},
		{"kmin below one MTU", func(f *intent.Fabric) { class(f, "roce").ECN.MinBytes = 1000 }, "FC110"},
		{"kmin and kmax below one MTU", func(f *intent.Fabric) {
			class(f, "roce").ECN.MinBytes, class(f, "roce").ECN.MaxBytes = 1000, 5000
		}, "FC110"},
		{"tos CE", func(f *intent.Fabric) { f.Policy.RoCE.ToS = 107 }, "FC119"},
		{"tos not-ECT", func(f *intent.Fabric) { f.Policy.RoCE.ToS = 104 }, "FC119"},
		{"tos lossy", func(f *intent.Fabric) { f.Policy.RoCE.ToS = 2 }, "FC119"},
		{"host cnp priority lossless", func(f *intent.Fabric) { f.Policy.RoCE.CNPPriority = 3 }, "FC108"},
		{"host cnp dscp", func(f *intent.Fabric) { f.Policy.RoCE.CNPDSCP = 46 }, "FC108"},
		{"watchdog poll above detect", func(f *intent.Fabric) { f.Policy.Watchdog.Poll = 300 * time.Millisecond }, "FC114"},
		{"watchdog restore below detect", func(f *intent.Fabric) { f.Policy.Watchdog.Restore = 100 * time.Millisecond }, "FC114"},
		{"global pause", func(f *intent.Fabric) { f.Policy.GlobalPause = true }, "FC116"},
		{"host mtu above switch", func(f *intent.Fabric) { f.Policy.HostMTU = 9500 }, "FC117"},
		{"path mtu above host mtu", func(f *intent.Fabric) { f.Policy.HostMTU = 4000 }, "FC118"},
		{"speed 400M", func(f *intent.Fabric) { f.Hosts[0].NICs[0].Speed = 400e6 }, "FC127"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := goodFabric()
			tt.mutate(f)
			before := Run(f, Options{})
			errsBefore := map[string]bool{}
			var target []Finding
			for _, x := range before {
				if x.Severity == Error {
					errsBefore[x.ID+" "+x.Path] = true
				}
				if x.ID == tt.rule {
					target = append(target, x)
				}
			}
			if len(target) == 0 {
				t.Fatalf("the fault raised no %s:\n%s", tt.rule, dump(before))
			}
			for _, x := range target {
				applied := false
				for _, a := range fixAppliers {
					if m := a.re.FindStringSubmatch(x.Fix); m != nil {
						if err := a.apply(f, x, m); err != nil {
							t.Fatalf("fix %q of %s: %v", x.Fix, x.ID, err)
						}
						applied = true
						break
					}
				}
				if !applied {
					t.Fatalf("no applier understands the fix %q of %s (add one, or make the fix mechanical)", x.Fix, x.ID)
				}
			}
			after := Run(f, Options{})
			for _, x := range after {
				if x.ID == tt.rule && x.Severity >= Warning {
					t.Errorf("after the fix, %s still fires: %s\n  fix was: %s", tt.rule, x, target[0].Fix)
				}
				if x.Severity == Error && !errsBefore[x.ID+" "+x.Path] {
					t.Errorf("the fix %q raised a new error: %s", target[0].Fix, x)
				}
			}
		})
	}
}
