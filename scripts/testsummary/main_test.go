package main

import (
	"strings"
	"testing"
)

func TestSummaryListsSkipsWithReasons(t *testing.T) {
	in := `{"Action":"start","Package":"x/a"}
{"Action":"run","Package":"x/a","Test":"TestOK"}
{"Action":"output","Package":"x/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"x/a","Test":"TestOK","Output":"--- PASS: TestOK (0.00s)\n"}
{"Action":"pass","Package":"x/a","Test":"TestOK"}
{"Action":"run","Package":"x/a","Test":"TestNeedsRDMA"}
{"Action":"output","Package":"x/a","Test":"TestNeedsRDMA","Output":"=== RUN   TestNeedsRDMA\n"}
{"Action":"output","Package":"x/a","Test":"TestNeedsRDMA","Output":"    rdma_test.go:12: no RDMA device (ibv_devices lists none)\n"}
{"Action":"output","Package":"x/a","Test":"TestNeedsRDMA","Output":"--- SKIP: TestNeedsRDMA (0.00s)\n"}
{"Action":"skip","Package":"x/a","Test":"TestNeedsRDMA"}
{"Action":"run","Package":"x/a","Test":"TestBroken"}
{"Action":"output","Package":"x/a","Test":"TestBroken","Output":"=== RUN   TestBroken\n"}
{"Action":"output","Package":"x/a","Test":"TestBroken","Output":"    a_test.go:5: got 1, want 2\n"}
{"Action":"output","Package":"x/a","Test":"TestBroken","Output":"--- FAIL: TestBroken (0.00s)\n"}
{"Action":"fail","Package":"x/a","Test":"TestBroken"}
{"Action":"output","Package":"x/a","Output":"FAIL\n"}
{"Action":"output","Package":"x/a","Output":"FAIL\tx/a\t0.01s\n"}
{"Action":"fail","Package":"x/a"}
{"Action":"output","Package":"x/b","Output":"ok  \tx/b\t0.02s\n"}
{"Action":"pass","Package":"x/b"}
{"Action":"output","Package":"x/c","Output":"?   \tx/c\t[no test files]\n"}
{"Action":"skip","Package":"x/c"}
`
	var out strings.Builder
	s, err := run(strings.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"    a_test.go:5: got 1, want 2\n--- FAIL: TestBroken (0.00s)\n",
		"FAIL\tx/a\t0.01s\n",
		"ok  \tx/b\t0.02s\n",
		"?   \tx/c\t[no test files]\n",
		"Skipped tests (1):\n  x/a TestNeedsRDMA: rdma_test.go:12: no RDMA device (ibv_devices lists none)\n",
		"\n1 passed, 1 failed, 1 skipped\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "=== RUN") || strings.Contains(got, "--- PASS") {
		t.Errorf("output has -v framing a plain go test would not print:\n%s", got)
	}
	if !s.pkgFailed || s.failed != 1 {
		t.Errorf("summary = %+v, want the failure counted", s)
	}
}
