package hostdrv

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/fabricctl/fabricctl/internal/netnstest"
	"github.com/fabricctl/fabricctl/internal/remote/sshtest"
)

// buildFabricctl builds the real binary for end-to-end fleet tests.
func buildFabricctl(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go toolchain not on PATH: cannot build fabricctl for the fleet test")
	}
	bin := filepath.Join(t.TempDir(), "fabricctl")
	out, err := exec.Command(goBin, "build", "-o", bin, "github.com/fabricctl/fabricctl/cmd/fabricctl").CombinedOutput()
	if err != nil {
		t.Skipf("cannot build fabricctl (is the working tree mid-edit?): %v\n%s", err, out)
	}
	return bin
}

// TestFleetOverSSH runs the real fabricctl through the real SSH runner
// against an in-test sshd on loopback; the "hosts" are two veths in a netns.
func TestFleetOverSSH(t *testing.T) {
	ns := netnstest.New(t)
	ns.Veth(t, "ens1f0np0", "peer0")
	ns.Veth(t, "ens1f1np1", "peer1")
	bin := buildFabricctl(t)
	t.Setenv("SSH_AUTH_SOCK", "")
	signer, keyFile := sshtest.NewKeyFile(t)
	srv := sshtest.Start(t, sshtest.Options{AuthorizedKeys: []ssh.PublicKey{signer.PublicKey()}})
	kh := sshtest.WriteKnownHosts(t, srv.KnownHostsLine())

	src := `apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: pod1}
policy: {preset: roce-lossless}
inventory:
  hosts:
    - {name: gpu1, address: 10.0.1.1, nics: [{interface: ens1f0np0}]}
    - {name: gpu2, address: 10.0.1.2, nics: [{interface: ens1f1np1}]}
`
	hosts := sshHosts(t, srv, keyFile, kh, "gpu1", "gpu2")
	fl := &Fleet{Command: []string{bin}, ExtraArgs: []string{"--netns", ns.Name, "--root", t.TempDir(), "--partial", "--backup", filepath.Join(t.TempDir(), "backup.json")}, Parallel: 2}
	got, err := fl.Run(context.Background(), "apply", hosts, []byte(src))
	if err == nil {
		t.Errorf("fleet apply on veths = nil error, want the DCB EOPNOTSUPP failures")
	}
	if len(got) != 2 {
		t.Fatalf("fleet returned %d targets, want 2", len(got))
	}
	for i, name := range []string{"gpu1", "gpu2"} {
		tg := got[i]
		if tg.Name != name || !strings.HasPrefix(tg.Error, "PARTLY WRITTEN: ") || !tg.HasChanges() {
			t.Errorf("target %d = {%s error %q changes %v}, want %s with the MTU change and the DCB error, partly written", i, tg.Name, tg.Error, tg.HasChanges(), name)
		}
		if !slices.ContainsFunc(tg.Notes, func(n string) bool { return strings.HasPrefix(n, "step applied: ens1f") }) {
			t.Errorf("target %s notes %q lack the per-step outcome", name, tg.Notes)
		}
	}
	for _, ifn := range []string{"ens1f0np0", "ens1f1np1"} {
		if l, err := ns.Netlink.LinkByName(ifn); err != nil || l.Attrs().MTU != 9000 {
			t.Errorf("%s MTU after fleet apply: %v %v, want 9000", ifn, l, err)
		}
	}
	cmds := strings.Join(srv.Commands(), "\n")
	for _, want := range []string{"host apply -f - --host gpu1 -o json --netns", "host apply -f - --host gpu2 -o json --netns"} {
		if !strings.Contains(cmds, want) {
			t.Errorf("sshd ran %q, want a command containing %q", cmds, want)
		}
	}
}
