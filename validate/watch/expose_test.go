package watch

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"

	"github.com/fabricctl/fabricctl/intent"
)

// TestHandlerMatchesCollect: the text Handler writes parses, and carries
// exactly the series (names, labels, values, help, type) Collect produces.
func TestHandlerMatchesCollect(t *testing.T) {
	for _, tc := range []struct {
		plat   intent.Platform
		sample func(string, uint64) [][]byte
	}{{intent.PlatformSRLinux, srlSample}, {intent.PlatformSONiC, sonicSample}} {
		t.Run(string(tc.plat), func(t *testing.T) {
			f := benchFabric(t, 3, tc.plat)
			w, err := New(Options{Fabric: f})
			if err != nil {
				t.Fatal(err)
			}
			var sb strings.Builder
			for i, tg := range w.targets {
				for p := range benchPorts {
					for _, msg := range tc.sample(portName(tc.plat, p), uint64(i+p+1)) {
						var resp gnmipb.SubscribeResponse
						if err := proto.Unmarshal(msg, &resp); err != nil {
							t.Fatal(err)
						}
						tg.ctr.ingest(resp.GetUpdate(), &sb)
					}
				}
			}
			full := prometheus.NewPedanticRegistry()
			full.MustRegister(w)
			want, err := full.Gather()
			if err != nil {
				t.Fatal(err)
			}
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(w.Health())
			rec := httptest.NewRecorder()
			w.Handler(reg).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
				t.Errorf("Content-Type %q", ct)
			}
			p := expfmt.NewTextParser(model.UTF8Validation)
			got, err := p.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
			if err != nil {
				t.Fatalf("Handler output does not parse: %v", err)
			}
			flat := func(mfs map[string]*dto.MetricFamily) map[string]string {
				out := map[string]string{}
				for _, mf := range mfs {
					for _, m := range mf.GetMetric() {
						var ls []string
						for _, l := range m.GetLabel() {
							ls = append(ls, l.GetName()+"="+l.GetValue())
						}
						slices.Sort(ls)
						v := m.GetCounter().GetValue() + m.GetGauge().GetValue()
						out[mf.GetName()+"{"+strings.Join(ls, ",")+"}"] = mf.GetType().String() + " " + mf.GetHelp() + " " + strconv.FormatFloat(v, 'g', -1, 64)
					}
				}
				return out
			}
			wantM := map[string]*dto.MetricFamily{}
			for _, mf := range want {
				wantM[mf.GetName()] = mf
			}
			a, b2 := flat(wantM), flat(got)
			if len(a) < 64*3 {
				t.Fatalf("only %d series collected", len(a))
			}
			for k, v := range a {
				if b2[k] != v {
					t.Errorf("%s: Collect %q, Handler %q", k, v, b2[k])
				}
			}
			for k := range b2 {
				if _, ok := a[k]; !ok {
					t.Errorf("%s: only in Handler's output", k)
				}
			}
		})
	}
}
