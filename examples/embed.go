// Package examples holds the example intents. They are embedded so the lab
// command can run without a checkout, and a test parses and checks every one
// of them so they never rot.
package examples

import "embed"

// FS holds every example intent.
//
//go:embed *.yaml mixed/*.yaml
var FS embed.FS

// Lab is the intent `fabricctl lab` runs against device twins.
const Lab = "lab.yaml"

// IntentDir says whether the folder examples/<name> holds one fabric intent
// (all its *.yaml files together, like examples/mixed). The other folders
// hold something else: broken intents (each its own test case), Kubernetes
// manifests, a GitOps repository, Prometheus rules, test data.
func IntentDir(name string) bool {
	switch name {
	case "broken", "k8s", "gitops", "testdata", "prometheus":
		return false
	}
	return true
}
