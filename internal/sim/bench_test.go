package sim

import (
	"testing"
	"time"
)

// benchIncast runs an N:1 incast at speed for 10 ms of fabric time (mlx5
// DCQCN defaults, the preset's ECN) and reports events per second and
// events per run. The goals (issue 14): 16:1 at 100G under 1 s, 64:1 at
// 400G under 5 s.
func benchIncast(b *testing.B, n int, speed int64) {
	f := parse(b, minimalIntent)
	sc, err := ParseSpec("incast:" + itoa(n) + ":1")
	if err != nil {
		b.Fatal(err)
	}
	var events int64
	var wall time.Duration
	b.ReportAllocs()
	for b.Loop() {
		net, err := Build(f, sc, StarOptions{Speed: speed}, 1)
		if err != nil {
			b.Fatal(err)
		}
		r := New(net, Options{Duration: 10 * time.Millisecond}).Run()
		if !r.Conservation.Holds() {
			b.Fatalf("conservation: %+v", r.Conservation)
		}
		events += r.Events
		wall += r.Wall
	}
	b.ReportMetric(float64(events)/wall.Seconds(), "events/s")
	b.ReportMetric(float64(events)/float64(b.N), "events/run")
}

func BenchmarkIncast16to1At100G10ms(b *testing.B) { benchIncast(b, 16, 100e9) }
func BenchmarkIncast64to1At400G10ms(b *testing.B) { benchIncast(b, 64, 400e9) }

// BenchmarkIncast16to1At100G10msNoECN is the same 16:1 with PFC alone: the
// senders run at line rate whenever they are not paused, the densest load.
func BenchmarkIncast16to1At100G10msNoECN(b *testing.B) {
	f := parse(b, minimalIntent)
	sc, _ := ParseSpec("incast:16:1")
	var events int64
	var wall time.Duration
	for b.Loop() {
		net, err := Build(f, sc, StarOptions{Speed: 100e9}, 1)
		if err != nil {
			b.Fatal(err)
		}
		r := New(net, Options{Duration: 10 * time.Millisecond, NoECN: true}).Run()
		events += r.Events
		wall += r.Wall
	}
	b.ReportMetric(float64(events)/wall.Seconds(), "events/s")
	b.ReportMetric(float64(events)/float64(b.N), "events/run")
}

// BenchmarkScaling: PFC-only incasts (the densest load) over growing fabric
// time and fan-in, for the linearity claim.
func BenchmarkScaling(b *testing.B) {
	f := parse(b, minimalIntent)
	for _, tc := range []struct {
		n int
		d time.Duration
	}{{16, 2500 * time.Microsecond}, {16, 5 * time.Millisecond}, {16, 10 * time.Millisecond}, {4, 5 * time.Millisecond}, {64, 5 * time.Millisecond}} {
		b.Run(itoa(tc.n)+"to1-"+tc.d.String(), func(b *testing.B) {
			sc, _ := ParseSpec("incast:" + itoa(tc.n) + ":1")
			var events int64
			for b.Loop() {
				net, err := Build(f, sc, StarOptions{Speed: 100e9}, 1)
				if err != nil {
					b.Fatal(err)
				}
				events += New(net, Options{Duration: tc.d, NoECN: true}).Run().Events
			}
			b.ReportMetric(float64(events)/float64(b.N), "events/run")
		})
	}
}

// BenchmarkIncast16to1At100G10msLossy is the 16:1 on the RoCE class made
// lossy (ECN/DCQCN only): every drop is recovered by go-back-N, the cost
// of PSN tracking, ACKs, NAKs and resends.
func BenchmarkIncast16to1At100G10msLossy(b *testing.B) {
	f := parse(b, lossyIntent)
	sc, _ := ParseSpec("incast:16:1")
	var events int64
	var wall time.Duration
	b.ReportAllocs()
	for b.Loop() {
		net, err := Build(f, sc, StarOptions{Speed: 100e9}, 1)
		if err != nil {
			b.Fatal(err)
		}
		r := New(net, Options{Duration: 10 * time.Millisecond, AckTimeout: AckTimeout(8)}).Run()
		if !r.Conservation.Holds() || r.Recovery.RetransmittedBytes == 0 {
			b.Fatalf("conservation %+v, recovery %+v", r.Conservation, r.Recovery)
		}
		events += r.Events
		wall += r.Wall
	}
	b.ReportMetric(float64(events)/wall.Seconds(), "events/s")
	b.ReportMetric(float64(events)/float64(b.N), "events/run")
}
