package watch

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// Handler serves /metrics in the Prometheus text format (0.0.4): first the
// metrics of reg (register Health() there, with Go and process collectors
// if wanted), then the per-port counter families, written straight from
// the counters. A 2,000-switch fabric has over a million series; building a
// client_golang metric object for each would take seconds per scrape (see
// BenchmarkWatch* and README), writing them takes a fraction of that. The
// output is the same series Collect produces (TestHandlerMatchesCollect).
func (w *Watcher) Handler(reg prometheus.Gatherer) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		mfs, err := reg.Gather()
		if err != nil {
			http.Error(rw, "gather: "+err.Error(), http.StatusInternalServerError)
			return
		}
		rw.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
		bw := bufio.NewWriterSize(rw, 256<<10)
		for _, mf := range mfs {
			if _, err := expfmt.MetricFamilyToText(bw, mf); err != nil {
				return
			}
		}
		w.writeCounters(bw)
		_ = bw.Flush()
	})
}

// writeCounters writes the per-port counter families.
func (w *Watcher) writeCounters(bw *bufio.Writer) {
	type family struct {
		name, help string
		kinds      []int
	}
	fams := []family{
		{MetricQueueDrops, helpDrops, []int{kDrops}},
		{MetricECNMarked, helpECN, []int{kECN}},
		{MetricPFCPause, helpPause, []int{kPFCTx, kPFCRx}},
		{MetricWatchdog, helpWatchdog, []int{kWatchdog}},
		{MetricBufferDiscards, helpDiscards, []int{-1}},
	}
	buf := make([]byte, 0, 256)
	targets, _ := w.current()
	// Each switch's counters are copied once, under its own lock, and the
	// text is written from the copies with no lock held: a scraper that
	// stops reading blocks only its own scrape (until the server's
	// WriteTimeout), never ingest or another scrape. (A switch locked five
	// times per scrape, each time waiting for an ingest that may have been
	// preempted holding the lock, made scrapes of a busy 2,000-switch
	// watch on a loaded machine take a minute.) A switch that is not
	// streaming exports no counters.
	pooled, _ := w.scrapeCopies.Get().(*[]countersCopy)
	if pooled == nil {
		pooled = new([]countersCopy)
	}
	if cap(*pooled) < len(targets) {
		*pooled = make([]countersCopy, len(targets))
	}
	defer w.scrapeCopies.Put(pooled)
	copies := (*pooled)[:len(targets)]
	live := make([]bool, len(targets))
	for i, t := range targets {
		if live[i] = t.up.Load(); live[i] {
			t.ctr.copyTo(&copies[i])
		}
	}
	for _, f := range fams {
		header := false
		for i, t := range targets {
			if !live[i] {
				continue
			}
			sw := t.sw.Name
			t.ctr.each(copies[i].vals, copies[i].seen, func(port string, prio, kind int, v uint64) {
				if v == 0 && w.opts.NonZero {
					return
				}
				dir := ""
				switch {
				case kind == f.kinds[0]:
					if kind == kPFCTx {
						dir = "tx"
					}
				case len(f.kinds) > 1 && kind == f.kinds[1]:
					dir = "rx"
				default:
					return
				}
				if !header {
					header = true
					bw.WriteString("# HELP " + f.name + " " + f.help + "\n# TYPE " + f.name + " counter\n")
				}
				b := append(buf[:0], f.name...)
				b = append(b, `{switch="`...)
				b = appendLabel(b, sw)
				b = append(b, `",port="`...)
				b = appendLabel(b, port)
				if prio >= 0 {
					b = append(b, `",priority="`...)
					b = append(b, prioLabels[prio]...)
				}
				if dir != "" {
					b = append(b, `",direction="`...)
					b = append(b, dir...)
				}
				b = append(b, `"} `...)
				b = strconv.AppendUint(b, v, 10)
				b = append(b, '\n')
				bw.Write(b)
			})
		}
	}
}

// appendLabel escapes a label value as the text format requires.
func appendLabel(b []byte, v string) []byte {
	if !strings.ContainsAny(v, "\\\"\n") {
		return append(b, v...)
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\':
			b = append(b, `\\`...)
		case '"':
			b = append(b, `\"`...)
		case '\n':
			b = append(b, `\n`...)
		default:
			b = append(b, c)
		}
	}
	return b
}
