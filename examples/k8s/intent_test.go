// Package k8s_test checks the intent the Kubernetes example deploys. The
// manifests themselves (kustomize base and overlay, rendered and decoded
// strictly into the Kubernetes API types) are checked by tools/shipcheck, a
// module of its own that keeps k8s.io/api and kustomize out of this go.mod.
package k8s_test

import (
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
)

// pod1/fabric.yaml becomes the ConfigMaps fabricctl-intent (the overlay's
// configMapGenerator), which every host agent reads, and
// fabricctl-watch-intent, which fabricctl watch streams the switches of.
func TestOverlayIntentPassesCheck(t *testing.T) {
	f, err := intent.Load("pod1/fabric.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Hosts) == 0 {
		t.Errorf("pod1/fabric.yaml has no hosts: no node would find itself in it")
	}
	if len(f.Switches) == 0 {
		t.Errorf("pod1/fabric.yaml has no switches: fabricctl watch would refuse to start")
	}
	// watch reads the credentials from the Secret mounted at
	// /etc/fabricctl-secrets (base/watch-deployment.yaml).
	for _, sw := range f.Switches {
		c := sw.Credentials
		for _, p := range []string{c.UsernameFile, c.PasswordFile, sw.TLS.CA} {
			if !strings.HasPrefix(p, "/etc/fabricctl-secrets/") {
				t.Errorf("switch %s: %q is not a file of the Secret mounted at /etc/fabricctl-secrets", sw.Name, p)
			}
		}
	}
	for _, fd := range check.Run(f, check.Options{}) {
		if fd.Severity >= check.Error {
			t.Errorf("check: %s", fd)
		}
	}
}
