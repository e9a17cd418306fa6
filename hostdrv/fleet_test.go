package hostdrv

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/remote"
	"github.com/fabricctl/fabricctl/internal/remote/sshtest"
	"github.com/fabricctl/fabricctl/plan"
)

// fakeFabricctl writes a shell script that stands in for the remote
// fabricctl binary (a test double): it saves its arguments and stdin under
// dir, prints body and exits with code.
func fakeFabricctl(t *testing.T, dir, body string, code int) string {
	t.Helper()
	p := filepath.Join(dir, "fabricctl")
	script := "#!/bin/sh\necho \"$@\" > " + dir + "/args\ncat > " + dir + "/stdin\ncat <<'JSON'\n" + body + "\nJSON\necho 'some warning' >&2\nexit " + string(rune('0'+code)) + "\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

const okPlan = `{"version": 1, "fabric": "pod1", "created": "2026-01-01T00:00:00Z", "targets": [
  {"name": "gpu1", "kind": "host", "basis": "x", "changes": [{"action": "update", "path": "ens1f0np0/mtu", "before": "1500", "after": "9000"}]}]}`

const failedPlan = `{"version": 1, "fabric": "pod1", "created": "2026-01-01T00:00:00Z", "targets": [
  {"name": "gpu1", "kind": "host", "basis": "x", "changes": [], "error": "host gpu1: ens1f0np0: PFC: the driver rejected the setting"}]}`

func TestFleetOutputs(t *testing.T) {
	tests := []struct {
		name    string
		verb    string
		body    string
		code    int
		wantErr bool
		changes bool
	}{
		{"apply ok", "apply", okPlan, 0, false, true},
		{"diff drift exits 2", "diff", okPlan, 2, false, true},
		{"apply failed with a plan", "apply", failedPlan, 1, true, false},
		{"apply exit 2 is a failure", "apply", okPlan, 2, true, true},
		{"apply partly written", "apply", failedPlan, 5, true, false},
		{"apply rolled back", "apply", failedPlan, 4, true, false},
		{"garbage output", "plan", "not json", 0, true, false},
		{"other host's plan", "plan", strings.ReplaceAll(okPlan, "gpu1", "gpu9"), 0, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fl := &Fleet{
				Command: []string{fakeFabricctl(t, dir, tc.body, tc.code)},
				Runner:  func(h intent.Host) (remote.Runner, error) { return remote.Local{Name: h.Name}, nil },
			}
			got, err := fl.Run(context.Background(), tc.verb, []intent.Host{{Name: "gpu1", Address: "10.0.1.1"}}, []byte(testIntent))
			if (err != nil) != tc.wantErr {
				t.Errorf("Run() error = %v, want error %v", err, tc.wantErr)
			}
			if len(got) != 1 || got[0].Name != "gpu1" || got[0].Kind != plan.KindHost {
				t.Fatalf("Run() = %+v, want one host target gpu1", got)
			}
			if (got[0].Error != "") != tc.wantErr {
				t.Errorf("target Error = %q, want set %v", got[0].Error, tc.wantErr)
			}
			if tc.code == 5 && !strings.HasPrefix(got[0].Error, "PARTLY WRITTEN: ") || tc.code == 4 && !strings.HasPrefix(got[0].Error, "rolled back to the backup: ") {
				t.Errorf("target Error = %q: the host's exit %d is not said", got[0].Error, tc.code)
			}
			if got[0].HasChanges() != tc.changes {
				t.Errorf("target HasChanges = %v, want %v", got[0].HasChanges(), tc.changes)
			}
			args, _ := os.ReadFile(filepath.Join(dir, "args"))
			if want := "host " + tc.verb + " -f - --host gpu1 -o json\n"; string(args) != want {
				t.Errorf("remote args = %q, want %q", args, want)
			}
			stdin, _ := os.ReadFile(filepath.Join(dir, "stdin"))
			if string(stdin) != testIntent {
				t.Errorf("remote stdin = %q, want the intent", stdin)
			}
		})
	}
}

func TestFleetBadVerb(t *testing.T) {
	if _, err := (&Fleet{}).Run(context.Background(), "destroy", nil, nil); err == nil {
		t.Errorf("Run(destroy) = nil error, want one")
	}
}

// TestFleetHostKeyMismatch: a host whose key is not the one in known_hosts
// is refused before anything runs.
func TestFleetHostKeyMismatch(t *testing.T) {
	t.Setenv("SSH_AUTH_SOCK", "")
	signer, keyFile := sshtest.NewKeyFile(t)
	srv := sshtest.Start(t, sshtest.Options{AuthorizedKeys: []ssh.PublicKey{signer.PublicKey()}})
	other := sshtest.Start(t, sshtest.Options{})
	// known_hosts names srv's address with the other server's key.
	line := strings.Replace(other.KnownHostsLine(), hostPortBracket(other.Addr), hostPortBracket(srv.Addr), 1)
	kh := sshtest.WriteKnownHosts(t, line)
	fl := &Fleet{Command: []string{"/bin/false"}}
	got, err := fl.Run(context.Background(), "apply", sshHosts(t, srv, keyFile, kh, "gpu1"), []byte(testIntent))
	var hk *remote.HostKeyError
	if !errors.As(err, &hk) {
		t.Errorf("fleet error = %v, want a *remote.HostKeyError", err)
	}
	if len(got) != 1 || got[0].Error == "" {
		t.Errorf("targets = %+v, want gpu1 with an error", got)
	}
	if n := len(srv.Commands()); n != 0 {
		t.Errorf("sshd ran %d commands on a host with the wrong key, want 0", n)
	}
}

func hostPortBracket(addr string) string {
	h, p, _ := strings.Cut(addr, ":")
	return "[" + h + "]:" + p
}

func sshHosts(t *testing.T, srv *sshtest.Server, keyFile, knownHosts string, names ...string) []intent.Host {
	var hs []intent.Host
	for _, n := range names {
		hs = append(hs, intent.Host{Name: n, Address: srv.Addr,
			SSH: intent.SSH{User: "root", KeyFile: keyFile, KnownHosts: knownHosts}})
	}
	return hs
}

// versionFabricctl is a TEST DOUBLE of fabricctl on a host that answers
// `version -o json` with stamp and `host plan` with okPlan, logging every
// argv to dir/calls.
func versionFabricctl(t *testing.T, dir, stamp string) string {
	t.Helper()
	p := filepath.Join(dir, "fabricctl")
	script := "#!/bin/sh\necho \"$0 $*\" >> " + dir + "/calls\nif [ \"$1\" = version ]; then echo '" + stamp + "'; exit 0; fi\ncat >/dev/null\ncat <<'JSON'\n" + okPlan + "\nJSON\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFleetCommandWordsAndVersion: the host command is argv words (here
// "env FOO=1 /path/fabricctl", as "sudo -n fabricctl" would be), used for
// every remote command; with Version set, a host whose fabricctl reports
// another version or revision is refused before any host command runs, and
// a matching one is asked once per host.
func TestFleetCommandWordsAndVersion(t *testing.T) {
	want := Stamp{Version: "v1.2.3", Revision: "0123abcd"}
	for _, tc := range []struct {
		name, stamp string
		ok          bool
	}{
		{"same build", `{"version":"v1.2.3","revision":"0123abcd","goVersion":"go1.26"}`, true},
		{"other revision", `{"version":"v1.2.3","revision":"ffffffff"}`, false},
		{"other version", `{"version":"v1.2.4","revision":"0123abcd"}`, false},
		{"not fabricctl", `hello`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			bin := versionFabricctl(t, dir, tc.stamp)
			fl := &Fleet{Command: []string{"env", "FOO=1", bin}, Version: &want,
				Runner: func(h intent.Host) (remote.Runner, error) { return remote.Local{Name: h.Name}, nil }}
			hosts := []intent.Host{{Name: "gpu1", Address: "10.0.1.1"}}
			for range 2 {
				got, err := fl.Run(context.Background(), "plan", hosts, []byte(testIntent))
				if (err == nil) != tc.ok || len(got) != 1 || (got[0].Error == "") != tc.ok {
					t.Fatalf("Run: %v, %+v; want ok=%v", err, got, tc.ok)
				}
				if !tc.ok && !errors.Is(err, ErrVersionSkew) && tc.name != "not fabricctl" {
					t.Errorf("error %v, want ErrVersionSkew", err)
				}
			}
			calls, _ := os.ReadFile(filepath.Join(dir, "calls"))
			lines := strings.Split(strings.TrimSpace(string(calls)), "\n")
			wantCalls := []string{bin + " version -o json", bin + " host plan -f - --host gpu1 -o json", bin + " host plan -f - --host gpu1 -o json"}
			if !tc.ok {
				wantCalls = []string{bin + " version -o json", bin + " version -o json"}
			}
			if strings.Join(lines, "\n") != strings.Join(wantCalls, "\n") {
				t.Errorf("remote calls:\n%s\nwant:\n%s", calls, strings.Join(wantCalls, "\n"))
			}
		})
	}
}
