package dcbnl

import (
	"bufio"
	"bytes"
	"encoding"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// field locates one struct field in the marshalled bytes: offset and size.
type field struct{ Off, Size int }

// uapiLayout is include/uapi/linux/dcbnl.h as the kernel lays it out on
// x86-64 and arm64 (the sizes are also checked below).
var uapiLayout = map[string]field{
	"ieee_ets.willing":         {0, 1},
	"ieee_ets.ets_cap":         {1, 1},
	"ieee_ets.cbs":             {2, 1},
	"ieee_ets.tc_tx_bw":        {3, 8},
	"ieee_ets.tc_rx_bw":        {11, 8},
	"ieee_ets.tc_tsa":          {19, 8},
	"ieee_ets.prio_tc":         {27, 8},
	"ieee_ets.tc_reco_bw":      {35, 8},
	"ieee_ets.tc_reco_tsa":     {43, 8},
	"ieee_ets.reco_prio_tc":    {51, 8},
	"ieee_pfc.pfc_cap":         {0, 1},
	"ieee_pfc.pfc_en":          {1, 1},
	"ieee_pfc.mbc":             {2, 1},
	"ieee_pfc.delay":           {4, 2},
	"ieee_pfc.requests":        {8, 64},
	"ieee_pfc.indications":     {72, 64},
	"dcb_app.selector":         {0, 1},
	"dcb_app.priority":         {1, 1},
	"dcb_app.protocol":         {2, 2},
	"dcbnl_buffer.prio2buffer": {0, 8},
	"dcbnl_buffer.buffer_size": {8, 32},
	"dcbnl_buffer.total_size":  {40, 4},
	"ieee_maxrate.tc_maxrate":  {0, 64},
	"sizeof.ieee_ets":          {0, 59},
	"sizeof.ieee_pfc":          {0, 136},
	"sizeof.dcb_app":           {0, 4},
	"sizeof.dcbnl_buffer":      {0, 44},
	"sizeof.ieee_maxrate":      {0, 64},
}

func fill8(a *[8]uint8) {
	for i := range a {
		a[i] = 0xff
	}
}

// probe marshals m after set() and reports where the non-zero bytes landed.
func probe(t *testing.T, m encoding.BinaryMarshaler) field {
	t.Helper()
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	first, last := -1, -1
	for i, c := range b {
		if c != 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return field{-1, 0}
	}
	return field{first, last - first + 1}
}

// goLayout finds every field by setting it alone to all-ones and marshalling.
func goLayout(t *testing.T) map[string]field {
	const all64 = ^uint64(0)
	got := map[string]field{}
	ets := func(name string, set func(*ETS)) {
		var e ETS
		set(&e)
		got["ieee_ets."+name] = probe(t, e)
	}
	ets("willing", func(e *ETS) { e.Willing = 0xff })
	ets("ets_cap", func(e *ETS) { e.ETSCap = 0xff })
	ets("cbs", func(e *ETS) { e.CBS = 0xff })
	ets("tc_tx_bw", func(e *ETS) { fill8(&e.TCTxBW) })
	ets("tc_rx_bw", func(e *ETS) { fill8(&e.TCRxBW) })
	ets("tc_tsa", func(e *ETS) { fill8(&e.TSA) })
	ets("prio_tc", func(e *ETS) { fill8(&e.PrioTC) })
	ets("tc_reco_bw", func(e *ETS) { fill8(&e.TCRecoBW) })
	ets("tc_reco_tsa", func(e *ETS) { fill8(&e.TCRecoTSA) })
	ets("reco_prio_tc", func(e *ETS) { fill8(&e.RecoPrioTC) })
	pfc := func(name string, set func(*PFC)) {
		var p PFC
		set(&p)
		got["ieee_pfc."+name] = probe(t, p)
	}
	pfc("pfc_cap", func(p *PFC) { p.Cap = 0xff })
	pfc("pfc_en", func(p *PFC) { p.Enable = 0xff })
	pfc("mbc", func(p *PFC) { p.MBC = 0xff })
	pfc("delay", func(p *PFC) { p.Delay = 0xffff })
	pfc("requests", func(p *PFC) {
		for i := range p.Requests {
			p.Requests[i] = all64
		}
	})
	pfc("indications", func(p *PFC) {
		for i := range p.Indications {
			p.Indications[i] = all64
		}
	})
	got["dcb_app.selector"] = probe(t, App{Selector: 0xff})
	got["dcb_app.priority"] = probe(t, App{Priority: 0xff})
	got["dcb_app.protocol"] = probe(t, App{Protocol: 0xffff})
	var bu Buffer
	fill8(&bu.PrioBuffer)
	got["dcbnl_buffer.prio2buffer"] = probe(t, bu)
	bu = Buffer{}
	for i := range bu.Size {
		bu.Size[i] = ^uint32(0)
	}
	got["dcbnl_buffer.buffer_size"] = probe(t, bu)
	got["dcbnl_buffer.total_size"] = probe(t, Buffer{Total: ^uint32(0)})
	var mr Maxrate
	for i := range mr.TCMaxrate {
		mr.TCMaxrate[i] = all64
	}
	got["ieee_maxrate.tc_maxrate"] = probe(t, mr)
	for name, m := range map[string]encoding.BinaryMarshaler{
		"ieee_ets": ETS{}, "ieee_pfc": PFC{}, "dcb_app": App{}, "dcbnl_buffer": Buffer{}, "ieee_maxrate": Maxrate{},
	} {
		b, _ := m.MarshalBinary()
		got["sizeof."+name] = field{0, len(b)}
	}
	return got
}

func TestLayoutMatchesUAPI(t *testing.T) {
	got := goLayout(t)
	if diff := cmp.Diff(uapiLayout, got); diff != "" {
		t.Errorf("marshalled layout differs from include/uapi/linux/dcbnl.h (-want +got):\n%s", diff)
	}
}

// TestLayoutMatchesCCompiler asks the C compiler for offsetof/sizeof of every
// field in the installed <linux/dcbnl.h> and compares with the marshalled
// layout.
func TestLayoutMatchesCCompiler(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc): cannot read the UAPI layout from <linux/dcbnl.h>")
	}
	if _, err := os.Stat("/usr/include/linux/dcbnl.h"); err != nil {
		t.Skip("/usr/include/linux/dcbnl.h missing (install linux-libc-dev): cannot read the UAPI layout")
	}
	var src strings.Builder
	src.WriteString("#include <stdio.h>\n#include <stddef.h>\n#include <linux/dcbnl.h>\n")
	src.WriteString("#define F(s,f) printf(#s \".\" #f \" %zu %zu\\n\", offsetof(struct s, f), sizeof(((struct s*)0)->f))\n")
	src.WriteString("#define S(s) printf(\"sizeof.\" #s \" 0 %zu\\n\", sizeof(struct s))\nint main(void){\n")
	for name := range uapiLayout {
		if s, ok := strings.CutPrefix(name, "sizeof."); ok {
			fmt.Fprintf(&src, "S(%s);\n", s)
			continue
		}
		s, f, _ := strings.Cut(name, ".")
		fmt.Fprintf(&src, "F(%s,%s);\n", s, f)
	}
	src.WriteString("return 0;}\n")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "l.c"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-o", filepath.Join(dir, "l"), filepath.Join(dir, "l.c")).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(dir, "l")).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]field{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var name string
		var f field
		if _, err := fmt.Sscanf(sc.Text(), "%s %d %d", &name, &f.Off, &f.Size); err != nil {
			t.Fatalf("parse %q: %v", sc.Text(), err)
		}
		want[name] = f
	}
	if diff := cmp.Diff(want, goLayout(t)); diff != "" {
		t.Errorf("marshalled layout differs from the C compiler's <linux/dcbnl.h> (-want +got):\n%s", diff)
	}
}

func TestPFCBytes(t *testing.T) {
	p := PFC{Cap: 8, Enable: 1 << 3, Delay: 0x0102}
	p.Requests[3] = 0x0a0b0c0d0e0f1011
	b, _ := p.MarshalBinary()
	want := make([]byte, SizePFC)
	want[0], want[1] = 8, 0x08
	ne.PutUint16(want[4:], 0x0102)
	ne.PutUint64(want[8+3*8:], 0x0a0b0c0d0e0f1011)
	if diff := cmp.Diff(want, b); diff != "" {
		t.Errorf("PFC.MarshalBinary mismatch (-want +got):\n%s", diff)
	}
	var back PFC
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, back); diff != "" {
		t.Errorf("PFC round trip (-want +got):\n%s", diff)
	}
}

func TestUnmarshalShort(t *testing.T) {
	for name, u := range map[string]encoding.BinaryUnmarshaler{
		"ets": new(ETS), "pfc": new(PFC), "app": new(App), "buffer": new(Buffer), "maxrate": new(Maxrate),
	} {
		if err := u.UnmarshalBinary(make([]byte, 3)); err == nil {
			t.Errorf("%s.UnmarshalBinary(3 bytes) = nil, want an error", name)
		}
	}
}
