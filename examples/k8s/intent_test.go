// Package k8s_test checks the intent the Kubernetes example deploys. The
// manifests themselves (kustomize base and overlay, rendered and decoded
// strictly into the Kubernetes API types) are checked by tools/shipcheck, a
// module of its own that keeps k8s.io/api and kustomize out of this go.mod.
package k8s_test

import (
	"testing"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
)

// pod1/fabric.yaml becomes the ConfigMap fabricctl-intent (the overlay's
// configMapGenerator) that every host agent reads.
func TestOverlayIntentPassesCheck(t *testing.T) {
	f, err := intent.Load("pod1/fabric.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Hosts) == 0 {
		t.Errorf("pod1/fabric.yaml has no hosts: no node would find itself in it")
	}
	for _, fd := range check.Run(f, check.Options{}) {
		if fd.Severity >= check.Error {
			t.Errorf("check: %s", fd)
		}
	}
}
