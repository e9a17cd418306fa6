// Package examples holds the example intents. They are embedded so the lab
// command can run without a checkout, and a test parses and checks every one
// of them so they never rot.
package examples

import (
	"bytes"
	"embed"
	"io/fs"
	"os"
	"path/filepath"
)

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
	case "broken", "k8s", "gitops", "testdata", "prometheus", ModesDir:
		return false
	}
	return true
}

// ModesDir is the folder of one example intent per RoCE mode
// (policy.mode: lossy, semi-lossless, pfc-only; lossless is every other
// example): each of its *.yaml files is a whole intent of its own.
const ModesDir = "modes"

// IntentSets walks the examples folder at root and returns each example
// intent as the files that make it, by name: a top-level *.yaml alone (its
// file name), a *.yaml of ModesDir alone ("modes/lossy.yaml"), or every
// intent *.yaml of an IntentDir folder together (the folder's name). A YAML file is an intent when it names the fabricctl
// apiVersion.
func IntentSets(root string) (map[string][]string, error) {
	sets := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && !IntentDir(d.Name()) && !(d.Name() == ModesDir && filepath.Dir(p) == root) {
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Ext(p) != ".yaml" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !bytes.Contains(b, []byte("apiVersion: fabricctl.io/")) {
			return nil
		}
		key, _ := filepath.Rel(root, p)
		if dir := filepath.Dir(p); dir != root && filepath.Base(dir) != ModesDir {
			key, _ = filepath.Rel(root, dir)
		}
		sets[key] = append(sets[key], p)
		return nil
	})
	return sets, err
}
