package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// writerIntent writes a copy of the lab intent l.file named name whose
// RoCE class marks ECN from minKB: three of them are three configurations
// of the same switches, as two colleagues' intents would be.
func writerIntent(t *testing.T, l *labTwins, name string, minKB int) string {
	t.Helper()
	b, err := os.ReadFile(l.file)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "  name: lab\n", "  name: "+name+"\n", 1)
	over := fmt.Sprintf("  preset: roce-lossless\n  classes:\n    - name: roce\n      ecn: {min: %dKB, max: 1500KB, probability: 100%%}\n", minKB)
	if !strings.Contains(text, "  preset: roce-lossless\n") {
		t.Fatal("the lab intent has no preset line to override")
	}
	text = strings.Replace(text, "  preset: roce-lossless\n", over, 1)
	path := filepath.Join(l.dir, name+".yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTwoWritersNeverUndoVerifiedWrites (issue 29): two real fabricctl
// processes apply two intents (different metadata.name, different ECN
// thresholds) to the same three twins at once, each with its own lock
// directory and backup directory, so the local lock does not keep them
// apart: only the rollback rule does. The twins' RPCs are slowed by
// delays that change at random while the runs go on, and the second run
// starts at a random offset, so that every interleaving of Sets and
// read-backs happens over the trials. After each trial:
//
//   - no switch is back to the state before both runs: a rollback never
//     undid a verified write (each run's Set overwrites the other's; only a
//     restore can bring the old state back);
//   - every switch holds one run's configuration, whole;
//   - exit 0: that run read back its own values on every switch;
//   - exit 6 (changed by another writer): its output names a switch
//     changed-by-another-writer, and that switch ends with the other run's
//     configuration; nothing was rolled back;
//   - no other exit code (4 would mean a rollback happened).
//
// FABRICCTL_TWO_WRITERS_SEED replays a schedule; FABRICCTL_TWO_WRITERS_TRIALS
// sets the number of trials (default 50, 10 with -short).
func TestTwoWritersNeverUndoVerifiedWrites(t *testing.T) {
	trials := 50
	if testing.Short() {
		trials = 10
	}
	if s := os.Getenv("FABRICCTL_TWO_WRITERS_TRIALS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		trials = n
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FABRICCTL_TWO_WRITERS_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d (replay: FABRICCTL_TWO_WRITERS_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x5bd1e995))

	l, dir := testLab(t)
	base := writerIntent(t, l, "lab-base", 120)
	files := map[string]string{"A": writerIntent(t, l, "lab-a", 150), "B": writerIntent(t, l, "lab-b", 180)}
	apply := func(file string) {
		t.Helper()
		runCLIWant(t, ExitOK, "apply", "-f", file, "--skip-hosts", "--backup-dir", filepath.Join(dir, "setup-b"))
	}
	// whose says, per switch, which configuration it holds whole (diff
	// in sync with that intent), or "mixed".
	configs := map[string]string{"base": base, "A": files["A"], "B": files["B"]}
	whose := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		for _, tw := range l.twins {
			out[tw.Name()] = "mixed"
		}
		for name, file := range configs {
			code, stdout, stderr := runCLI(t, t.Context(), "diff", "-f", file, "--skip-hosts")
			if code != ExitOK && code != ExitChanges {
				t.Fatalf("diff -f %s: exit %d\n%s%s", name, code, stdout, stderr)
			}
			for _, tw := range l.twins {
				if strings.Contains(stdout, "switch "+tw.Name()+": in sync") {
					out[tw.Name()] = name
				}
			}
		}
		return out
	}
	apply(files["A"])
	if got := fmt.Sprint(whose()); got != "map[leaf1:A leaf2:A leaf3:A]" {
		t.Fatalf("after applying A, the switches hold %s", got)
	}

	counts := map[string]int{}
	for trial := range trials {
		apply(base)
		for _, tw := range l.twins {
			tw.SetDelay(0)
		}
		// Delays that change while the runs go on: each twin gets a
		// new one (0-40 ms per RPC) every few milliseconds.
		stop := make(chan struct{})
		var wg sync.WaitGroup
		schedule := rng.Uint64()
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(schedule, schedule>>1))
			for {
				for _, tw := range l.twins {
					tw.SetDelay(time.Duration(r.IntN(5)*10) * time.Millisecond)
				}
				select {
				case <-stop:
					return
				case <-time.After(time.Duration(1+r.IntN(15)) * time.Millisecond):
				}
			}
		}()
		procs := map[string]*proc{}
		offset := time.Duration(rng.IntN(150)) * time.Millisecond
		for _, run := range []string{"A", "B"} {
			if run == "B" {
				time.Sleep(offset)
			}
			procs[run] = startFabricctl(t, nil, "apply", "-f", files[run], "--skip-hosts", "--parallel", strconv.Itoa(1+rng.IntN(3)),
				"--backup-dir", filepath.Join(dir, "backups-"+run), "--lock-dir", filepath.Join(dir, "locks-"+run))
		}
		for _, p := range procs {
			<-p.done
		}
		close(stop)
		wg.Wait()
		for _, tw := range l.twins {
			tw.SetDelay(0)
		}
		final := whose()
		report := func(format string, a ...any) {
			t.Helper()
			var b strings.Builder
			for _, run := range []string{"A", "B"} {
				fmt.Fprintf(&b, "\n--- run %s: exit %d\n%s%s", run, procs[run].code, procs[run].stdout.String(), procs[run].stderr.String())
			}
			t.Errorf("trial %d (offset %s), final %v: %s%s", trial, offset, final, fmt.Sprintf(format, a...), b.String())
		}
		for sw, who := range final {
			switch who {
			case "base":
				report("switch %s is back to the state before both runs: a verified write was undone", sw)
			case "mixed":
				report("switch %s holds neither run's configuration whole", sw)
			}
		}
		for run, p := range procs {
			other := map[string]string{"A": "B", "B": "A"}[run]
			out := p.stdout.String()
			counts[fmt.Sprintf("%s exit %d", run, p.code)]++
			switch p.code {
			case ExitOK:
				if !strings.Contains(out, "Apply: applied.") {
					report("run %s exited 0 without saying applied", run)
				}
			case ExitChangedByOther:
				named := false
				for sw := range final {
					if strings.Contains(out, "switch "+sw+": changed-by-another-writer") {
						named = true
						if final[sw] != other {
							report("run %s says %s was changed by another writer, but it ends with %s", run, sw, final[sw])
						}
					}
				}
				if !named {
					report("run %s exited 6 without naming the switch another writer changed", run)
				}
				if !strings.Contains(p.stderr.String(), "nothing was rolled back") {
					report("run %s exited 6 without saying nothing was rolled back", run)
				}
			default:
				report("run %s exited %d", run, p.code)
			}
		}
		if t.Failed() {
			t.Fatalf("seed %d; replay: FABRICCTL_TWO_WRITERS_SEED=%d", seed, seed)
		}
	}
	t.Logf("outcomes over %d trials: %v", trials, counts)
}
