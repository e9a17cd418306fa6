package hostdrv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// ethtoolPath finds ethtool(8), which Debian installs in /usr/sbin (often
// not on a test's PATH).
func ethtoolPath() string {
	if p, err := exec.LookPath("ethtool"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/ethtool"); err == nil {
		return "/usr/sbin/ethtool"
	}
	return ""
}

var errNoPtrace = errors.New("ptrace not permitted")

// ethtoolTunableBytes runs ethtool with args in ns under ptrace and returns
// the struct ethtool_tunable (and its 2 data bytes) it passed to each
// SIOCETHTOOL ioctl whose command is ETHTOOL_GTUNABLE or ETHTOOL_STUNABLE,
// read from ethtool's memory at the syscall's entry, before the kernel
// touches it, and what ethtool printed. strace cannot be the referee here:
// it prints SIOCETHTOOL's argument as a bare pointer (strace 6.1 does not
// decode ethtool commands), so this reads the bytes the way strace reads a
// write's buffer, with PTRACE_PEEKDATA. The tracer must be the thread that
// forked ethtool, so everything runs inside ns.Do's locked thread (which
// also puts ethtool in the namespace).
func ethtoolTunableBytes(t *testing.T, do func(func() error) error, args ...string) (reqs [][]byte, out string) {
	t.Helper()
	outFile, err := os.CreateTemp(t.TempDir(), "ethtool-out")
	if err != nil {
		t.Fatal(err)
	}
	defer outFile.Close()
	peek := func(pid int, addr uintptr, n int) ([]byte, error) {
		b := make([]byte, n)
		got, err := syscall.PtracePeekData(pid, addr, b)
		if err != nil || got != n {
			return nil, fmt.Errorf("peek %d bytes at %#x: got %d, %v", n, addr, got, err)
		}
		return b, nil
	}
	err = do(func() error {
		cmd := exec.Command(ethtoolPath(), args...)
		cmd.Stdout, cmd.Stderr = outFile, outFile // files: no copying goroutines
		cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
		if err := cmd.Start(); err != nil {
			if errors.Is(err, syscall.EPERM) {
				return errNoPtrace
			}
			return err
		}
		pid := cmd.Process.Pid
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil { // the stop at exec
			return err
		}
		if err := syscall.PtraceSetOptions(pid, syscall.PTRACE_O_TRACESYSGOOD|unix.PTRACE_O_EXITKILL); err != nil {
			return err
		}
		entry, sig := true, 0
		for {
			if err := syscall.PtraceSyscall(pid, sig); err != nil {
				return err
			}
			sig = 0
			if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
				return err
			}
			switch {
			case ws.Exited() || ws.Signaled():
				return nil
			case !ws.Stopped():
				continue
			case ws.StopSignal() != syscall.SIGTRAP|0x80:
				sig = int(ws.StopSignal()) // deliver it
				continue
			}
			var regs syscall.PtraceRegs
			if err := syscall.PtraceGetRegs(pid, &regs); err != nil {
				return err
			}
			if entry && regs.Orig_rax == syscall.SYS_IOCTL && regs.Rsi == unix.SIOCETHTOOL {
				ifr, err := peek(pid, uintptr(regs.Rdx), 40) // struct ifreq
				if err != nil {
					return err
				}
				data := uintptr(binary.NativeEndian.Uint64(ifr[16:24])) // ifr_data
				req, err := peek(pid, data, tunableHeader+2)
				if err != nil {
					return err
				}
				if cmd := binary.NativeEndian.Uint32(req); cmd == ethtoolGTunable || cmd == ethtoolSTunable {
					reqs = append(reqs, req)
				}
			}
			entry = !entry
		}
	})
	if errors.Is(err, errNoPtrace) && os.Getenv("CI") != "true" {
		t.Skip("ptrace is not permitted here (a container's seccomp profile or Yama ptrace_scope): cannot read the request ethtool passes")
	}
	if err != nil {
		t.Fatalf("ethtool %s under ptrace: %v", strings.Join(args, " "), err)
	}
	b, _ := os.ReadFile(outFile.Name())
	return reqs, string(b)
}

// TestTunableRequestIsEthtools is the byte-level referee of the ioctl
// fabricctl builds for policy.hostPauseStormPrevention: the real
// `ethtool --get-tunable X pfc-prevention-tout` and `ethtool --set-tunable
// X pfc-prevention-tout V` (V = 100, 65535 for auto, 0 for off), run on a
// veth in a private netns, pass SIOCETHTOOL the same struct ethtool_tunable
// and value bytes as pfcPreventionRequest, which LinuxKernel sends (the
// veth answers EOPNOTSUPP, as ethtool prints; the request is read before
// the kernel sees it). The twin's command line in the plan is the one run
// here.
func TestTunableRequestIsEthtools(t *testing.T) {
	if ethtoolPath() == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("ethtool not installed (scripts/install-deps.sh installs it): the tunable request has no referee")
		}
		t.Skip("ethtool not installed (scripts/install-deps.sh installs it): cannot read the tunable request ethtool sends")
	}
	ns, _ := kernelRig(t)
	for _, tc := range []struct {
		args []string
		want []byte
	}{
		{[]string{"--get-tunable", "ens1f0np0", "pfc-prevention-tout"}, pfcPreventionRequest(false, 0)},
		{[]string{"--set-tunable", "ens1f0np0", "pfc-prevention-tout", "100"}, pfcPreventionRequest(true, 100)},
		{[]string{"--set-tunable", "ens1f0np0", "pfc-prevention-tout", "65535"}, pfcPreventionRequest(true, 0xffff)},
		{[]string{"--set-tunable", "ens1f0np0", "pfc-prevention-tout", "0"}, pfcPreventionRequest(true, 0)},
	} {
		reqs, out := ethtoolTunableBytes(t, ns.Do, tc.args...)
		if len(reqs) != 1 {
			t.Errorf("ethtool %s: %d tunable ioctls, want 1 (output: %s)", strings.Join(tc.args, " "), len(reqs), out)
			continue
		}
		if !bytes.Equal(reqs[0], tc.want) {
			t.Errorf("ethtool %s passed %x\npfcPreventionRequest      %x", strings.Join(tc.args, " "), reqs[0], tc.want)
		}
		if !strings.Contains(out, "not supported") && !strings.Contains(out, "Cannot get tunable") {
			t.Errorf("ethtool %s on a veth printed %q, want its EOPNOTSUPP", strings.Join(tc.args, " "), out)
		}
	}
}
