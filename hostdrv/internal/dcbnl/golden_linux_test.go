package dcbnl

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/internal/netnstest"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "update golden files (re-capture iproute2 requests with strace)")

// fullMap is mlnx_qos --trust dscp's table: DSCP i -> priority i>>3.
func fullMap() []App {
	apps := make([]App, 64)
	for i := range apps {
		apps[i] = App{Selector: SelectorDSCP, Priority: uint8(i >> 3), Protocol: uint16(i)}
	}
	return apps
}

func fullMapArgs() []string {
	var s []string
	for i := range 64 {
		s = append(s, fmt.Sprintf("%d:%d", i, i>>3))
	}
	return s
}

const goldenIfname = "ens1f0np0"

// iproute2Cases pairs each captured dcb(8) command with the request our
// encoder must produce for it.
var iproute2Cases = []struct {
	file string
	argv []string
	req  Request
}{
	{"app-add", []string{"app", "add", "dev", goldenIfname, "dscp-prio", "26:3", "48:6"},
		AddApps(goldenIfname, []App{{SelectorDSCP, 3, 26}, {SelectorDSCP, 6, 48}})},
	{"app-del", []string{"app", "del", "dev", goldenIfname, "dscp-prio", "26:3", "48:6"},
		DelApps(goldenIfname, []App{{SelectorDSCP, 3, 26}, {SelectorDSCP, 6, 48}})},
	{"dcbx-set-host-ieee", []string{"dcbx", "set", "dev", goldenIfname, "host", "ieee"},
		SetDCBX(goldenIfname, DCBXHost|DCBXVerIEEE)},
	{"pfc-show", []string{"pfc", "show", "dev", goldenIfname},
		GetIEEE(goldenIfname)},
	{"app-add-full-map", append([]string{"app", "add", "dev", goldenIfname, "dscp-prio"}, fullMapArgs()...),
		AddApps(goldenIfname, fullMap())},
}

// parseStraceDump reads the " | 00000  3c 00 ...  |...|" lines that
// `strace -e write=FD` prints, and returns the bytes of the first message.
func parseStraceDump(text string) ([]byte, error) {
	var out []byte
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, " | ") || len(line) < 10 {
			continue
		}
		off, err := strconv.ParseUint(strings.TrimSpace(line[3:8]), 16, 32)
		if err != nil {
			return nil, fmt.Errorf("offset in %q: %w", line, err)
		}
		if off == 0 && len(out) > 0 {
			break // a second message starts
		}
		end := min(len(line), 58)
		for _, f := range strings.Fields(line[10:end]) {
			b, err := hex.DecodeString(f)
			if err != nil || len(b) != 1 {
				return nil, fmt.Errorf("byte %q in %q: bad hex", f, line)
			}
			out = append(out, b[0])
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no strace hex dump lines found")
	}
	return out, nil
}

// comparable zeroes nlmsg_seq and nlmsg_pid, which differ on every run.
func maskSeqPid(b []byte) []byte {
	c := bytes.Clone(b)
	if len(c) >= 16 {
		clear(c[8:16])
	}
	return c
}

func hexLines(b []byte) []string {
	var s []string
	for i := 0; i < len(b); i += 16 {
		s = append(s, hex.EncodeToString(b[i:min(i+16, len(b))]))
	}
	return s
}

func TestEncodeMatchesIproute2(t *testing.T) {
	for _, tc := range iproute2Cases {
		t.Run(tc.file, func(t *testing.T) {
			text, err := os.ReadFile(filepath.Join("testdata", "iproute2", tc.file+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := parseStraceDump(string(text))
			if err != nil {
				t.Fatalf("%s: %v", tc.file, err)
			}
			got, err := tc.req.Encode(0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(hexLines(maskSeqPid(want)), hexLines(maskSeqPid(got))); diff != "" {
				t.Errorf("Encode(%s) differs from `dcb %s` (-want +got):\n%s", tc.file, strings.Join(tc.argv, " "), diff)
			}
			// And the captured bytes parse back into the same request.
			_, parsed, err := ParseMessage(want)
			if err != nil {
				t.Fatalf("ParseMessage(captured %s): %v", tc.file, err)
			}
			if diff := cmp.Diff(tc.req, parsed); diff != "" {
				t.Errorf("ParseMessage(captured %s) mismatch (-want +got):\n%s", tc.file, diff)
			}
		})
	}
}

// TestIproute2Live re-captures the requests from the installed dcb(8) on a
// veth in a private netns and checks the encoder against them. With -update
// it rewrites the golden files.
func TestIproute2Live(t *testing.T) {
	for _, bin := range []string{"strace", "dcb", "ip"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed: cannot capture iproute2's dcb requests", bin)
		}
	}
	ns := netnstest.New(t)
	ns.Veth(t, goldenIfname, "ens1f0peer")
	ver, _ := exec.Command("dcb", "-V").CombinedOutput()
	kernel, _ := exec.Command("uname", "-r").Output()
	for _, tc := range iproute2Cases {
		t.Run(tc.file, func(t *testing.T) {
			argv := append([]string{"strace", "-xx", "-e", "trace=sendto,sendmsg", "-e", "write=3", "dcb"}, tc.argv...)
			out, _ := ns.Command(argv...).CombinedOutput() // dcb exits 1: the veth has no DCB ops
			got, err := parseStraceDump(string(out))
			if err != nil {
				t.Fatalf("strace dcb %s: %v\n%s", strings.Join(tc.argv, " "), err, out)
			}
			want, _ := tc.req.Encode(0, 0)
			if diff := cmp.Diff(hexLines(maskSeqPid(want)), hexLines(maskSeqPid(got))); diff != "" {
				t.Errorf("live `dcb %s` (%s) differs from Encode (-encoder +dcb):\n%s",
					strings.Join(tc.argv, " "), strings.TrimSpace(string(ver)), diff)
			}
			if !*update {
				return
			}
			var b strings.Builder
			fmt.Fprintf(&b, "# command: dcb %s\n", strings.Join(tc.argv, " "))
			fmt.Fprintf(&b, "# iproute2: %s\n", strings.TrimSpace(string(ver)))
			fmt.Fprintf(&b, "# kernel: %s, interface %s = veth in a private netns (the kernel answers EOPNOTSUPP)\n", strings.TrimSpace(string(kernel)), goldenIfname)
			fmt.Fprintf(&b, "# captured with: ip netns exec NS strace -xx -e trace=sendto,sendmsg -e write=3 dcb %s\n", strings.Join(tc.argv, " "))
			b.WriteString("# lines below: strace's hex dump of the first request; nlmsg_seq (bytes 8-11) and nlmsg_pid (12-15) are not compared\n")
			for _, l := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(l, " | ") {
					b.WriteString(l + "\n")
				}
			}
			if err := os.WriteFile(filepath.Join("testdata", "iproute2", tc.file+".txt"), []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}
