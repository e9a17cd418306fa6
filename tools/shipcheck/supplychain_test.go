package shipcheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

type workflow struct {
	Jobs map[string]struct {
		Environment any               `json:"environment"`
		Permissions map[string]string `json:"permissions"`
		Steps       []struct {
			Name string            `json:"name"`
			Uses string            `json:"uses"`
			Run  string            `json:"run"`
			With map[string]any    `json:"with"`
			Env  map[string]string `json:"env"`
		} `json:"steps"`
	} `json:"jobs"`
}

func readWorkflow(t *testing.T, path string) workflow {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(b, &w); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return w
}

var pinned = regexp.MustCompile(`^[\w.-]+/[\w./-]+@[0-9a-f]{40}$`)

// TestWorkflowsPinActionsAndDropCredentials: every action of every
// workflow (the repository's and the gitops sample's) is pinned by commit
// SHA, not by a tag that can be moved, and every checkout leaves no
// credentials in .git for the later steps.
func TestWorkflowsPinActionsAndDropCredentials(t *testing.T) {
	for _, dir := range workflowProjects(t) {
		files, _ := filepath.Glob(filepath.Join(dir, ".github", "workflows", "*.yml"))
		for _, f := range files {
			rel, _ := filepath.Rel(repoRoot(t), f)
			for name, job := range readWorkflow(t, f).Jobs {
				for _, st := range job.Steps {
					if st.Uses == "" || strings.HasPrefix(st.Uses, "./") {
						continue
					}
					if !pinned.MatchString(st.Uses) {
						t.Errorf("%s job %s: uses %s: pin it by commit SHA", rel, name, st.Uses)
					}
					if strings.HasPrefix(st.Uses, "actions/checkout@") && st.With["persist-credentials"] != false {
						t.Errorf("%s job %s: checkout without persist-credentials: false", rel, name)
					}
				}
			}
		}
	}
}

// TestReleaseSupplyChain: the release job runs in a protected environment,
// restores no cache, runs govulncheck before building, signs the image and
// SHA256SUMS keylessly, attests the build provenance of the files and the
// image, and publishes an SBOM and the signature bundle; CI runs
// govulncheck too.
func TestReleaseSupplyChain(t *testing.T) {
	root := repoRoot(t)
	rel := readWorkflow(t, filepath.Join(root, ".github", "workflows", "release.yml"))
	job, ok := rel.Jobs["release"]
	if !ok {
		t.Fatal("release.yml has no job release")
	}
	if job.Environment == nil {
		t.Errorf("the release job names no environment (required reviewers protect it)")
	}
	for k, v := range map[string]string{"id-token": "write", "attestations": "write", "packages": "write", "contents": "write"} {
		if job.Permissions[k] != v {
			t.Errorf("release permissions %s: %q, want %q", k, job.Permissions[k], v)
		}
	}
	var runs, uses []string
	built := -1
	for i, st := range job.Steps {
		runs = append(runs, st.Run)
		uses = append(uses, strings.SplitN(st.Uses, "@", 2)[0])
		if strings.HasPrefix(st.Uses, "actions/setup-go@") && st.With["cache"] != false {
			t.Errorf("release: setup-go restores the module cache (want cache: false)")
		}
		if strings.HasPrefix(st.Uses, "actions/cache") {
			t.Errorf("release: step %q restores a cache", st.Name)
		}
		if strings.Contains(st.Run, "build-release.sh") && built < 0 {
			built = i
		}
	}
	all := strings.Join(runs, "\n")
	vuln := strings.Index(all, "scripts/govulncheck.sh")
	if vuln < 0 || vuln > strings.Index(all, "build-release.sh") {
		t.Errorf("release: govulncheck does not run before the build")
	}
	for _, want := range []string{"cosign sign --yes", "cosign sign-blob --yes --bundle dist/SHA256SUMS.sigstore.json dist/SHA256SUMS",
		"dist/SHA256SUMS.sigstore.json", "dist/fabricctl.spdx.json"} {
		if !strings.Contains(all, want) {
			t.Errorf("release: no step runs %q", want)
		}
	}
	for _, want := range []string{"sigstore/cosign-installer", "actions/attest-build-provenance", "anchore/sbom-action"} {
		found := false
		for _, u := range uses {
			found = found || u == want
		}
		if !found {
			t.Errorf("release: no %s step", want)
		}
	}
	ci := readWorkflow(t, filepath.Join(root, ".github", "workflows", "ci.yml"))
	found := false
	for _, j := range ci.Jobs {
		for _, st := range j.Steps {
			found = found || strings.Contains(st.Run, "scripts/govulncheck.sh")
		}
	}
	if !found {
		t.Errorf("ci.yml does not run scripts/govulncheck.sh")
	}
}

// minToolchain is the oldest Go 1.26 release without the standard-library
// vulnerabilities govulncheck found in what fabricctl calls (crypto/x509,
// net/http, crypto/tls, html/template ...: fixed in 1.26.9 and 1.26.10).
const minToolchain = 10

// TestToolchainAndModules: every module of the repository names one
// toolchain, at least go1.26.10 (the workflows build with it: setup-go
// reads the toolchain line), and tools/imagebuild's klauspost/compress is
// at least v1.20.2 (GO-2026-6865).
func TestToolchainAndModules(t *testing.T) {
	root := repoRoot(t)
	var toolchains []string
	for _, m := range []string{"go.mod", "tools/imagebuild/go.mod", "tools/shipcheck/go.mod", "tools/lemmingcheck/go.mod"} {
		b, err := os.ReadFile(filepath.Join(root, m))
		if err != nil {
			t.Fatal(err)
		}
		m1 := regexp.MustCompile(`(?m)^toolchain (\S+)$`).FindSubmatch(b)
		if m1 == nil {
			t.Errorf("%s: no toolchain line", m)
			continue
		}
		tc := string(m1[1])
		toolchains = append(toolchains, tc)
		patch, ok := strings.CutPrefix(tc, "go1.26.")
		if n, err := strconv.Atoi(patch); !ok || err != nil || n < minToolchain {
			t.Errorf("%s: toolchain %s, want go1.26.%d or later", m, tc, minToolchain)
		}
		if m == "tools/imagebuild/go.mod" {
			c := regexp.MustCompile(`(?m)^\s*github.com/klauspost/compress (v\S+)`).FindSubmatch(b)
			if c == nil || modfileLess(string(c[1]), "v1.20.2") {
				t.Errorf("%s: klauspost/compress %q, want v1.20.2 or later", m, c)
			}
		}
	}
	for _, tc := range toolchains[1:] {
		if tc != toolchains[0] {
			t.Errorf("the modules name different toolchains: %v", toolchains)
		}
	}
}

// modfileLess compares two vX.Y.Z versions.
func modfileLess(a, b string) bool {
	pa, pb := strings.Split(strings.TrimPrefix(a, "v"), "."), strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := 0; i < 3 && i < len(pa) && i < len(pb); i++ {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x < y
		}
	}
	return false
}
