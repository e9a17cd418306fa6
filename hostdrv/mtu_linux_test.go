package hostdrv

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// straceBytes reads the last message of the " | 00000  28 00 ..." hex
// dump lines `strace -e write=FD` prints (ip first sends an empty
// RTM_NEWLINK probe on the same socket; the MTU request is the last).
func straceBytes(t *testing.T, text string) []byte {
	t.Helper()
	var out []byte
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, " | ") || len(line) < 10 {
			continue
		}
		off, err := strconv.ParseUint(strings.TrimSpace(line[3:8]), 16, 32)
		if err != nil {
			t.Fatalf("offset in %q: %v", line, err)
		}
		if off == 0 {
			out = out[:0]
		}
		for _, f := range strings.Fields(line[10:min(len(line), 58)]) {
			b, err := hex.DecodeString(f)
			if err != nil || len(b) != 1 {
				t.Fatalf("byte %q in %q", f, line)
			}
			out = append(out, b[0])
		}
	}
	if len(out) == 0 {
		t.Fatal("no strace hex dump lines")
	}
	return out
}

// maskSeq zeroes nlmsg_seq and nlmsg_pid, which differ on every run.
func maskSeq(b []byte) []byte {
	c := bytes.Clone(b)
	if len(c) >= 16 {
		clear(c[8:16])
	}
	return c
}

// TestMTURequestMatchesIPLink: the MTU request `-o netlink` shows and
// SetMTU sends is byte for byte what `ip link set dev X mtu 9000` sent
// (RTM_NEWLINK, NLM_F_REQUEST|NLM_F_ACK, the ifindex, IFLA_MTU), as captured
// with strace on a veth in a netns (testdata/iproute2/ip-link-set-mtu.txt).
func TestMTURequestMatchesIPLink(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("testdata", "iproute2", "ip-link-set-mtu.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := straceBytes(t, string(text))
	if len(want) < 24 {
		t.Fatalf("captured request too short: %x", want)
	}
	index := int(binary.NativeEndian.Uint32(want[20:24])) // ifi_index of the veth it was captured on
	got := setLinkMTURequest(7, index, 9000)
	if !bytes.Equal(maskSeq(want), maskSeq(got)) {
		t.Errorf("setLinkMTURequest = %x\nip link set sent   %x", maskSeq(got), maskSeq(want))
	}
}

// TestMTURequestLive re-captures `ip link set` on a veth in a private netns
// and compares; then SetMTU sets the MTU for real and Link reads it and
// IFLA_MAX_MTU back.
func TestMTURequestLive(t *testing.T) {
	for _, bin := range []string{"strace", "ip"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed: cannot capture ip link set", bin)
		}
	}
	ns, k := kernelRig(t)
	li, err := k.Link("ens1f0np0")
	if err != nil {
		t.Fatal(err)
	}
	out, err := ns.Command("strace", "-xx", "-e", "trace=sendto,sendmsg", "-e", "write=3", "ip", "link", "set", "dev", "ens1f0np0", "mtu", "9000").CombinedOutput()
	if err != nil {
		t.Fatalf("strace ip link set: %v\n%s", err, out)
	}
	got := straceBytes(t, string(out))
	if want := setLinkMTURequest(0, li.Index, 9000); !bytes.Equal(maskSeq(got), maskSeq(want)) {
		t.Errorf("live ip link set sent %x\nsetLinkMTURequest    %x", maskSeq(got), maskSeq(want))
	}
	if err := k.SetMTU("ens1f0np0", 4200); err != nil {
		t.Fatalf("SetMTU: %v", err)
	}
	li, err = k.Link("ens1f0np0")
	if err != nil || li.MTU != 4200 || li.MaxMTU != 65535 {
		t.Errorf("Link after SetMTU = %+v, %v; want MTU 4200, max_mtu 65535 (veth)", li, err)
	}
	if os.Getenv("FABRICCTL_UPDATE_GOLDEN") != "" {
		var b strings.Builder
		ver, _ := exec.Command("ip", "-V").CombinedOutput()
		fmt.Fprintf(&b, "# command: ip link set dev ens1f0np0 mtu 9000 (ifindex %d)\n# %s\n", li.Index, strings.TrimSpace(string(ver)))
		b.WriteString("# captured with: ip netns exec NS strace -xx -e trace=sendto,sendmsg -e write=3 ip link set dev ens1f0np0 mtu 9000\n")
		b.WriteString("# lines below: strace's hex dump of what ip wrote on the socket (an empty RTM_NEWLINK probe, then the request, which is compared); nlmsg_seq (bytes 8-11) and nlmsg_pid (12-15) are not compared\n")
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, " | ") {
				b.WriteString(l + "\n")
			}
		}
		if err := os.WriteFile(filepath.Join("testdata", "iproute2", "ip-link-set-mtu.txt"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
