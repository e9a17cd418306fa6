package clab

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"golang.org/x/crypto/ssh"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/netnstest"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

// TestE2EScriptFailsLoudlyAndCleansUp runs containerlab/e2e.sh for real,
// with test doubles of containerlab, docker, modprobe and sshpass (scripts
// that record their arguments), inside a fresh network namespace in which
// nothing is reachable. It proves the script's control flow on a machine
// without Docker: it stops at the first broken step and names it, never
// deploys an intent that fails check, and destroys a deployed lab on the
// way out.
func TestE2EScriptFailsLoudlyAndCleansUp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fabricctl")
	}
	if os.Geteuid() != 0 {
		t.Skip("e2e.sh refuses to run without root (containerlab and ip netns need it)")
	}
	for _, c := range []string{"bash", "unshare", "go", "ssh-keygen", "awk", "timeout"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("%s is not installed", c)
		}
	}
	tmp := t.TempDir()
	labs := filepath.Join(tmp, "containerlab")
	for _, f := range []string{"e2e.sh", "hosts/host-setup.sh", "srl-leafspine/srl-leafspine.clab.yml", "srl-leafspine/fabric.yaml"} {
		copyFile(t, filepath.Join(labsDir, f), filepath.Join(labs, f))
	}
	bin := filepath.Join(tmp, "fabricctl")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/fabricctl").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	fake := filepath.Join(tmp, "fakebin")
	calls := filepath.Join(tmp, "calls.log")
	for name, code := range map[string]int{"containerlab": 0, "docker": 1, "modprobe": 1, "sshpass": 1} {
		script := "#!/bin/sh\n# test double of " + name + ": records its arguments\necho \"" + name + " $*\" >> " + calls + "\nexit " + string(rune('0'+code)) + "\n"
		if err := os.MkdirAll(fake, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(fake, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := func(t *testing.T, reports string) (string, error) {
		t.Helper()
		if err := os.WriteFile(calls, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		// unshare -n: a new network namespace with only a down loopback, so
		// the script's probes of the lab addresses reach nothing.
		cmd := exec.Command("unshare", "-n", "bash", filepath.Join(labs, "e2e.sh"), "srl-leafspine")
		cmd.Env = append(os.Environ(), "PATH="+fake+":"+os.Getenv("PATH"), "FABRICCTL="+bin, "READY_TIMEOUT=1",
			"REPORTS_DIR="+reports, "SRL_PASSWORD=do-not-print-me")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	readCalls := func(t *testing.T) string {
		t.Helper()
		b, err := os.ReadFile(calls)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	t.Run("unreachable hosts", func(t *testing.T) {
		reports := filepath.Join(tmp, "reports-a")
		out, err := run(t, reports)
		if err == nil {
			t.Fatalf("e2e.sh succeeded with no lab behind it:\n%s", out)
		}
		if !strings.Contains(out, `FAILED at step "wait for the hosts (sshd)"`) {
			t.Errorf("output does not name the broken step:\n%s", out)
		}
		c := readCalls(t)
		deploy := strings.Index(c, "containerlab deploy -t "+filepath.Join(labs, "srl-leafspine", "srl-leafspine.clab.yml"))
		destroy := strings.Index(c, "containerlab destroy -t "+filepath.Join(labs, "srl-leafspine", "srl-leafspine.clab.yml")+" --cleanup")
		if deploy < 0 || destroy < deploy {
			t.Errorf("want deploy, then destroy on the way out; calls:\n%s", c)
		}
		if _, err := os.Stat(filepath.Join(reports, "check.json")); err != nil {
			t.Errorf("no check report: %v", err)
		}
		if _, err := os.Stat(filepath.Join(labs, "srl-leafspine", "lab_key.pub")); err != nil {
			t.Errorf("the lab key the hosts bind was not generated: %v", err)
		}
		if strings.Contains(out, "do-not-print-me") {
			t.Error("the script printed SRL_PASSWORD")
		}
	})

	t.Run("intent fails check", func(t *testing.T) {
		intent := filepath.Join(labs, "srl-leafspine", "fabric.yaml")
		b, err := os.ReadFile(intent)
		if err != nil {
			t.Fatal(err)
		}
		broken := strings.Replace(string(b), "mtu: 9216", "mtu: 9216\n  globalPause: true", 1)
		if err := os.WriteFile(intent, []byte(broken), 0o644); err != nil {
			t.Fatal(err)
		}
		reports := filepath.Join(tmp, "reports-b")
		out, err := run(t, reports)
		if err == nil {
			t.Fatalf("e2e.sh succeeded with an intent that fails check:\n%s", out)
		}
		if !strings.Contains(out, `FAILED at step "check"`) {
			t.Errorf("output does not name the check step:\n%s", out)
		}
		if c := readCalls(t); strings.Contains(c, "containerlab") {
			t.Errorf("containerlab was called although check failed:\n%s", c)
		}
		if b, err := os.ReadFile(filepath.Join(reports, "exit-codes.txt")); err != nil || !strings.Contains(string(b), "check exit 3") {
			t.Errorf("exit-codes.txt = %q, %v; want check exit 3", b, err)
		}
	})
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, st.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}

// TestE2EScriptAgainstTwins runs containerlab/e2e.sh on the srl-leafspine lab
// with the switches played by fabricctl's gNMI device twins (TLS with a lab
// CA where containerlab puts it, password authentication) and the hosts by
// SSH servers that only show their host key, all on 127.30.10.0/24 inside a
// private network namespace. containerlab and docker are test doubles that
// record their arguments. It proves the switch half of the script against a
// real gNMI server: the readiness wait, plan --out, apply of the saved plan,
// diff in sync and an empty second plan, each with the real flags; and that
// the script stops at validate, which needs real hosts, and destroys the lab.
func TestE2EScriptAgainstTwins(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fabricctl")
	}
	for _, c := range []string{"bash", "go", "ssh-keygen", "ssh-keyscan", "awk", "timeout", "ip"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("%s is not installed", c)
		}
	}
	ns := netnstest.New(t) // skips unless root
	if out, err := ns.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("lo up: %v\n%s", err, out)
	}

	tmp := t.TempDir()
	labs := filepath.Join(tmp, "containerlab")
	lab := filepath.Join(labs, "srl-leafspine")
	for _, f := range []string{"e2e.sh", "hosts/host-setup.sh", "srl-leafspine/srl-leafspine.clab.yml", "srl-leafspine/fabric.yaml"} {
		copyFile(t, filepath.Join(labsDir, f), filepath.Join(labs, f))
	}
	// the same lab on loopback addresses: 172.30.10.x -> 127.30.10.x
	for _, f := range []string{"srl-leafspine.clab.yml", "fabric.yaml"} {
		p := filepath.Join(lab, f)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(b), "172.30.10.", "127.30.10.")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pki, err := twin.NewPKI("srl-leafspine", "127.30.10.11", "127.30.10.12", "127.30.10.21", "127.30.10.22")
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(lab, "clab-srl-leafspine", ".tls", "ca", "ca.pem") // where containerlab writes the lab CA
	if err := os.MkdirAll(filepath.Dir(ca), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca, pki.CAPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	srvTLS, err := pki.ServerTLS(false)
	if err != nil {
		t.Fatal(err)
	}
	const user, pass = "admin", "twin-lab-pass"
	var twins []*twin.Twin
	err = ns.Do(func() error {
		for _, sw := range []struct{ name, ip string }{{"spine1", "11"}, {"spine2", "12"}, {"leaf1", "21"}, {"leaf2", "22"}} {
			tw, err := twin.Start(twin.Options{Name: sw.name, Platform: intent.PlatformSRLinux, Addr: "127.30.10." + sw.ip + ":57400",
				TLS: srvTLS, Username: user, Password: pass})
			if err != nil {
				return err
			}
			t.Cleanup(tw.Close)
			twins = append(twins, tw)
			// The node's startup configuration, as containerlab loads it:
			// the interfaces and subinterfaces (with their ip-mtu) the
			// SR Linux plan checks.
			if err := seedStartupConfig(tw, filepath.Join(labsDir, "srl-leafspine", "configs", sw.name+".cli")); err != nil {
				return err
			}
		}
		for i := 31; i <= 34; i++ {
			if err := hostKeyServer(t, fmt.Sprintf("127.30.10.%d:22", i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	bin := filepath.Join(tmp, "fabricctl")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/fabricctl").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	fake := filepath.Join(tmp, "fakebin")
	calls := filepath.Join(tmp, "calls.log")
	if err := os.MkdirAll(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, code := range map[string]string{"containerlab": "0", "docker": "1", "modprobe": "1"} {
		script := "#!/bin/sh\n# test double of " + name + ": records its arguments\necho \"" + name + " $*\" >> " + calls + "\nexit " + code + "\n"
		if err := os.WriteFile(filepath.Join(fake, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	reports := filepath.Join(tmp, "reports")
	cmd := ns.Command("bash", filepath.Join(labs, "e2e.sh"), "srl-leafspine")
	cmd.Env = append(os.Environ(), "PATH="+fake+":"+os.Getenv("PATH"), "FABRICCTL="+bin, "READY_TIMEOUT=60",
		"REPORTS_DIR="+reports, "SRL_USERNAME="+user, "SRL_PASSWORD="+pass)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("e2e.sh passed validate with no hosts behind it:\n%s", out)
	}
	if !strings.Contains(string(out), `FAILED at step "validate"`) {
		t.Fatalf("e2e.sh did not get to validate:\n%s", out)
	}
	codes, err := os.ReadFile(filepath.Join(reports, "exit-codes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"check exit 0", "plan exit 0", "apply exit 0", "diff exit 0", "replan exit 0"} {
		if !strings.Contains(string(codes), want) {
			t.Errorf("exit-codes.txt lacks %q:\n%s", want, codes)
		}
	}
	for _, f := range []string{"plan.md", "plan.json", "apply.json", "diff.json", "replan.json"} {
		if st, err := os.Stat(filepath.Join(reports, f)); err != nil || st.Size() == 0 {
			t.Errorf("report %s missing or empty (%v)", f, err)
		}
	}
	for _, tw := range twins {
		if tw.Sets() != 1 {
			t.Errorf("twin %s got %d SetRequests, want exactly 1 (one apply, nothing on re-plan)", tw.Name(), tw.Sets())
		}
	}
	// The hosts' plan ran over SSH (and failed: the test doubles take no
	// logins), and that did not stop the script.
	if !strings.Contains(string(codes), "host-plan exit 1") || !strings.Contains(string(out), "note: host plan exit 1") {
		t.Errorf("host plan was not run and noted:\n%s\n%s", codes, out)
	}
	kh, err := os.ReadFile(filepath.Join(lab, "known_hosts"))
	if err != nil || strings.Count(string(kh), "ssh-ed25519") != 4 {
		t.Errorf("known_hosts = %q, %v; want the 4 hosts' ed25519 keys", kh, err)
	}
	if c, _ := os.ReadFile(calls); !strings.Contains(string(c), "containerlab destroy -t "+filepath.Join(lab, "srl-leafspine.clab.yml")+" --cleanup") {
		t.Errorf("the lab was not destroyed; calls:\n%s", c)
	}
	if strings.Contains(string(out), pass) {
		t.Error("the script printed SRL_PASSWORD")
	}
}

// hostKeyServer listens on addr with an SSH server that completes the key
// exchange (enough for ssh-keyscan) and refuses everything else: a test
// double of a lab host's sshd.
func hostKeyServer(t *testing.T, addr string) error {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	signer, err := ssh.NewSignerFromKey(key)
	if err != nil {
		return err
	}
	cfg := &ssh.ServerConfig{PasswordCallback: func(ssh.ConnMetadata, []byte) (*ssh.Permissions, error) {
		return nil, errors.New("no logins on a host key test double")
	}}
	cfg.AddHostKey(signer)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				if sc, chans, reqs, err := ssh.NewServerConn(c, cfg); err == nil {
					go ssh.DiscardRequests(reqs)
					for ch := range chans {
						ch.Reject(ssh.Prohibited, "test double")
					}
					sc.Close()
				}
			}()
		}
	}()
	return nil
}

// seedStartupConfig puts the interfaces of an SR Linux startup
// configuration (containerlab's configs/<node>.cli: "set / interface X
// admin-state enable", "set / interface X subinterface N ip-mtu M", "set /
// interface X subinterface N ipv4 ...") into a twin, without addresses.
func seedStartupConfig(tw *twin.Twin, file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	subs := map[string]map[int]map[string]any{}
	var order []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[0] != "set" || f[1] != "/" || f[2] != "interface" || f[4] != "subinterface" {
			continue
		}
		n, err := strconv.Atoi(f[5])
		if err != nil {
			return fmt.Errorf("%s: %q: %w", file, line, err)
		}
		if subs[f[3]] == nil {
			subs[f[3]] = map[int]map[string]any{}
			order = append(order, f[3])
		}
		si := subs[f[3]][n]
		if si == nil {
			si = map[string]any{"index": n, "admin-state": "enable"}
			subs[f[3]][n] = si
		}
		if len(f) == 8 && f[6] == "ip-mtu" {
			if si["ip-mtu"], err = strconv.Atoi(f[7]); err != nil {
				return fmt.Errorf("%s: %q: %w", file, line, err)
			}
		}
	}
	for _, name := range order {
		var list []any
		for _, si := range subs[name] {
			list = append(list, si)
		}
		path := &gnmipb.Path{Elem: []*gnmipb.PathElem{{Name: "srl_nokia-interfaces:interface", Key: map[string]string{"name": name}}}}
		if err := tw.Put(path, map[string]any{"name": name, "admin-state": "enable", "subinterface": list}); err != nil {
			return err
		}
	}
	return nil
}
