package hostdrv

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricctl/fabricctl/hostdrv/internal/dcbnl"
	"github.com/fabricctl/fabricctl/intent"
)

func TestFindHost(t *testing.T) {
	hn, err := os.Hostname()
	if err != nil {
		t.Skipf("no hostname: %v", err)
	}
	short, _, _ := strings.Cut(hn, ".")
	f := &intent.Fabric{Hosts: []intent.Host{{Name: "gpu1"}, {Name: short}}}
	tests := []struct {
		name, arg, want string
		wantErr         bool
	}{
		{"by flag", "gpu1", "gpu1", false},
		{"by hostname", "", short, false},
		{"unknown", "gpu9", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := FindHost(f, tc.arg)
			if (err != nil) != tc.wantErr {
				t.Fatalf("FindHost(%q) error = %v, want error %v", tc.arg, err, tc.wantErr)
			}
			if err == nil && h.Name != tc.want {
				t.Errorf("FindHost(%q) = %s, want %s", tc.arg, h.Name, tc.want)
			}
		})
	}
	if _, err := FindHost(&intent.Fabric{Hosts: []intent.Host{{Name: "gpu1"}}}, ""); err == nil {
		t.Errorf("FindHost(\"\") on an inventory without this machine = nil error")
	}
}

// TestWriteNetlink: every hex line of -o netlink is a whole netlink message
// that parses back to exactly the request the step sends.
func TestWriteNetlink(t *testing.T) {
	r := newRig(t, treeOpts{ecn: "sysfs", configfs: true})
	f, h := loadIntent(t, withBuffers)
	p, err := r.d.Plan(context.Background(), f, h)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteNetlink(&b, p); err != nil {
		t.Fatal(err)
	}
	netlinkOut := b.String()
	var dcbSteps, lines int
	var printed [][]byte // the dcb requests as -o netlink shows them
	for _, s := range p.Steps {
		if strings.HasPrefix(s.Command, "dcb ") {
			dcbSteps++
		}
	}
	sc := bufio.NewScanner(&b)
	sc.Buffer(nil, 1<<20)
	var cmds []string
	for sc.Scan() {
		line := sc.Text()
		if c, ok := strings.CutPrefix(line, "# "); ok {
			cmds = append(cmds, c)
			continue
		}
		lines++
		raw, err := hex.DecodeString(line)
		if err != nil {
			t.Fatalf("line %q is not hex: %v", line, err)
		}
		cmd := cmds[len(cmds)-1]
		if !strings.HasPrefix(cmd, "dcb ") {
			continue // the RTM_NEWLINK of ip link set
		}
		_, req, err := dcbnl.ParseMessage(raw)
		if err != nil {
			t.Fatalf("-o netlink line for %q does not parse: %v", cmd, err)
		}
		if req.Type != dcbnl.RTMSetDCB || !strings.Contains(cmd, req.Ifname()) {
			t.Errorf("%q: request type %d for %q, want RTM_SETDCB for its interface", cmd, req.Type, req.Ifname())
		}
		printed = append(printed, raw)
	}
	if want := dcbSteps + 2; lines != want { // + one RTM_NEWLINK per NIC
		t.Errorf("%d hex lines, want %d (dcb steps + MTU)", lines, want)
	}
	// What was printed is what apply sends, byte for byte (sequence number
	// and port id aside), in the same order.
	if _, err := r.d.Apply(context.Background(), p); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	mask := func(msgs [][]byte) []string {
		var out []string
		for _, m := range msgs {
			c := bytes.Clone(m)
			clear(c[8:16])
			out = append(out, hex.EncodeToString(c))
		}
		return out
	}
	if diff := cmp.Diff(mask(printed), mask(r.k.sent)); diff != "" {
		t.Errorf("-o netlink differs from the requests apply sent (-printed +sent):\n%s", diff)
	}
	var c bytes.Buffer
	if err := WriteCommands(&c, p); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(c.String()), "\n") {
		if !strings.HasPrefix(l, "#") {
			got = append(got, l)
		}
	}
	var want []string
	for _, s := range p.Steps {
		want = append(want, s.Command)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WriteCommands lines (-want +got):\n%s", diff)
	}
	for _, bufLine := range []string{
		"dcb buffer set dev ens1f0np0 buffer-size 0:131072 1:200001\n",
		"dcb buffer set dev ens1f0np0 prio-buffer 0:0 1:0 2:0 3:1 4:0 5:0 6:0 7:0\n",
	} {
		if !strings.Contains(c.String(), bufLine) {
			t.Errorf("-o commands lacks %q:\n%s", bufLine, c.String())
		}
		if !strings.Contains(netlinkOut, "# "+bufLine) {
			t.Errorf("-o netlink lacks the request of %q", bufLine)
		}
	}
}
