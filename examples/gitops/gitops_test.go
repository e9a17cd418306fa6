// Package gitops_test checks the sample fabric repository: its intent files
// pass check, and its CI workflow has the properties the README promises.
package gitops_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/intent/check"
)

const workflowFile = ".github/workflows/fabric.yml"

// intentFiles returns the files the workflow's INTENT_FILES names, in order.
func intentFiles(t *testing.T, wf *workflow) []string {
	t.Helper()
	var files []string
	for _, pat := range strings.Fields(wf.Env["INTENT_FILES"]) {
		m, err := filepath.Glob(pat)
		if err != nil || len(m) == 0 {
			t.Fatalf("INTENT_FILES pattern %q matches nothing (%v)", pat, err)
		}
		files = append(files, m...)
	}
	return files
}

type step struct {
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	If   string            `yaml:"if"`
	Env  map[string]string `yaml:"env"`
	With map[string]any    `yaml:"with"`
}

type concurrency struct {
	Group            string `yaml:"group"`
	CancelInProgress bool   `yaml:"cancel-in-progress"`
}

type job struct {
	Name        string            `yaml:"name"`
	If          string            `yaml:"if"`
	Needs       any               `yaml:"needs"`
	RunsOn      any               `yaml:"runs-on"`
	Environment any               `yaml:"environment"`
	Timeout     int               `yaml:"timeout-minutes"`
	Concurrency *concurrency      `yaml:"concurrency"`
	Permissions map[string]string `yaml:"permissions"`
	Env         map[string]string `yaml:"env"`
	Steps       []step            `yaml:"steps"`
}

type workflow struct {
	Name        string            `yaml:"name"`
	On          map[string]any    `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Concurrency *concurrency      `yaml:"concurrency"`
	Env         map[string]string `yaml:"env"`
	Jobs        map[string]job    `yaml:"jobs"`
}

func loadWorkflow(t *testing.T) (*workflow, []byte) {
	t.Helper()
	data, err := os.ReadFile(workflowFile)
	if err != nil {
		t.Fatal(err)
	}
	var wf workflow
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&wf); err != nil {
		t.Fatalf("%s: %v", workflowFile, err)
	}
	return &wf, data
}

// runs returns the run scripts of a job, joined.
func (j job) runs() string {
	var b strings.Builder
	for _, s := range j.Steps {
		b.WriteString(s.Run)
		b.WriteString("\n")
	}
	return b.String()
}

func TestFabricPassesCheck(t *testing.T) {
	wf, _ := loadWorkflow(t)
	files := intentFiles(t, wf)
	f, err := intent.Load(files...)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Switches) == 0 || len(f.Hosts) == 0 || len(f.Links) == 0 {
		t.Errorf("the sample fabric has %d switches, %d hosts, %d links; want some of each", len(f.Switches), len(f.Hosts), len(f.Links))
	}
	for _, fd := range check.Run(f, check.Options{}) {
		if fd.Severity >= check.Warning {
			t.Errorf("check: %s", fd)
		}
	}
}

func TestWorkflowTriggers(t *testing.T) {
	wf, _ := loadWorkflow(t)
	for _, ev := range []string{"pull_request", "push", "schedule"} {
		if _, ok := wf.On[ev]; !ok {
			t.Errorf("workflow does not run on %s", ev)
		}
	}
	push, _ := wf.On["push"].(map[string]any)
	branches, _ := push["branches"].([]any)
	if len(branches) != 1 || branches[0] != "main" {
		t.Errorf("push branches = %v, want [main]", branches)
	}
	if wf.Permissions["contents"] != "read" || len(wf.Permissions) != 1 {
		t.Errorf("workflow permissions = %v, want only contents: read", wf.Permissions)
	}
	for n, j := range wf.Jobs {
		if j.Timeout <= 0 {
			t.Errorf("job %s has no timeout-minutes: a hung switch would hold the concurrency group for 6 hours", n)
		}
	}
}

// jobFor returns the job whose if: names the event, failing when there is
// not exactly one.
func jobFor(t *testing.T, wf *workflow, event string) (string, job) {
	t.Helper()
	var names []string
	for n, j := range wf.Jobs {
		if strings.Contains(j.If, "'"+event+"'") && strings.Contains(j.runs(), "fabricctl") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if event == "pull_request" {
		return "", job{} // two jobs; see TestPullRequestJobs
	}
	if len(names) != 1 {
		t.Fatalf("jobs for %s: %v, want exactly one", event, names)
	}
	return names[0], wf.Jobs[names[0]]
}

func TestPullRequestJobs(t *testing.T) {
	wf, _ := loadWorkflow(t)
	var checkRun, planRun, comment bool
	for _, j := range wf.Jobs {
		if !strings.Contains(j.If, "'pull_request'") {
			continue
		}
		r := j.runs()
		checkRun = checkRun || strings.Contains(r, "fabricctl check ")
		if regexp.MustCompile(`fabricctl plan [^\n]*-o markdown`).MatchString(r) {
			planRun = true
			if !strings.Contains(j.If, "head.repo.full_name == github.repository") {
				t.Error("the plan job runs on pull requests from forks, which get no secrets")
			}
			if j.Permissions["pull-requests"] != "write" {
				t.Errorf("plan job permissions = %v, want pull-requests: write to comment", j.Permissions)
			}
			comment = strings.Contains(r, "gh pr comment") && strings.Contains(r, "--body-file plan.md")
		}
		if strings.Contains(r, "fabricctl apply") {
			t.Error("a pull-request job runs apply")
		}
	}
	if !checkRun || !planRun || !comment {
		t.Errorf("pull requests: check %v, plan -o markdown %v, plan posted as a comment %v; want all", checkRun, planRun, comment)
	}
}

func TestApplyJob(t *testing.T) {
	wf, _ := loadWorkflow(t)
	name, j := jobFor(t, wf, "push")
	r := j.runs()
	planAt := regexp.MustCompile(`fabricctl plan [^\n]*--out plan\.json`).FindStringIndex(r)
	applyAt := regexp.MustCompile(`fabricctl apply [^\n]* plan\.json`).FindStringIndex(r)
	if planAt == nil || applyAt == nil || applyAt[0] < planAt[0] {
		t.Errorf("job %s must run `fabricctl plan --out plan.json` and then `fabricctl apply ... plan.json`:\n%s", name, r)
	}
	if !strings.Contains(j.If, "refs/heads/main") {
		t.Errorf("job %s: if %q does not restrict apply to main", name, j.If)
	}
	if j.Environment == nil {
		t.Errorf("job %s has no environment: nothing guards apply with reviewers", name)
	}
}

func TestApplyConcurrency(t *testing.T) {
	wf, _ := loadWorkflow(t)
	_, apply := jobFor(t, wf, "push")
	_, drift := jobFor(t, wf, "schedule")
	c := apply.Concurrency
	if c == nil {
		c = wf.Concurrency
	}
	if c == nil || c.Group == "" {
		t.Fatal("the apply job has no concurrency group: two applies could run at once")
	}
	if c.CancelInProgress {
		t.Error("apply's concurrency group cancels a running apply (cancel-in-progress: true); an apply must finish or roll back")
	}
	if strings.Contains(c.Group, "github.sha") || strings.Contains(c.Group, "github.run_id") || strings.Contains(c.Group, "github.ref") {
		t.Errorf("apply concurrency group %q differs per run, so it serialises nothing", c.Group)
	}
	if drift.Concurrency == nil || drift.Concurrency.Group != c.Group {
		t.Errorf("the drift job does not share apply's concurrency group %q: it could read a fabric half-applied", c.Group)
	}
}

// CI configures the switches only; hosts reconcile themselves (DaemonSet), so
// the runner never needs SSH access to the servers.
func TestCIleavesHostsAlone(t *testing.T) {
	wf, _ := loadWorkflow(t)
	call := regexp.MustCompile(`(?m)^\s*fabricctl (plan|apply|diff)\b[^\n]*`)
	n := 0
	for name, j := range wf.Jobs {
		for _, c := range call.FindAllString(j.runs(), -1) {
			n++
			if !strings.Contains(c, "--skip-hosts") {
				t.Errorf("job %s: %q reaches the hosts over SSH; want --skip-hosts", name, c)
			}
		}
	}
	if n < 5 {
		t.Errorf("found %d plan/apply/diff calls, want at least 5", n)
	}
}

func TestDriftJob(t *testing.T) {
	wf, _ := loadWorkflow(t)
	name, j := jobFor(t, wf, "schedule")
	r := j.runs()
	if !strings.Contains(r, "fabricctl diff ") {
		t.Fatalf("job %s does not run fabricctl diff", name)
	}
	if !regexp.MustCompile(`2\)[^\n]*exit 2`).MatchString(r) {
		t.Errorf("job %s does not fail on drift (diff exit 2):\n%s", name, r)
	}
}

// Credentials reach the jobs only from the secret store, and nothing prints
// them or turns on shell tracing.
func TestSecretsOnlyFromSecretStore(t *testing.T) {
	wf, data := loadWorkflow(t)
	f, err := intent.Load(intentFiles(t, wf)...)
	if err != nil {
		t.Fatal(err)
	}
	credEnv := map[string]bool{}
	for _, s := range f.Switches {
		credEnv[s.Credentials.UsernameEnv] = true
		credEnv[s.Credentials.PasswordEnv] = true
	}
	delete(credEnv, "")
	secretRef := regexp.MustCompile(`^\$\{\{\s*secrets\.[A-Za-z_][A-Za-z0-9_]*\s*\}\}$`)
	sensitive := regexp.MustCompile(`(?i)pass|secret|token|user|key|cred`)
	checkEnv := func(where string, env map[string]string) {
		for k, v := range env {
			switch {
			case k == "GH_TOKEN" && v == "${{ github.token }}":
			case credEnv[k] || sensitive.MatchString(k):
				if !secretRef.MatchString(v) {
					t.Errorf("%s: env %s = %q, want a ${{ secrets.* }} reference", where, k, v)
				}
			case strings.Contains(v, "secrets."):
				t.Errorf("%s: env %s carries a secret under a name that does not say so", where, k)
			}
		}
	}
	checkEnv("workflow", wf.Env)
	for n, j := range wf.Jobs {
		checkEnv("job "+n, j.Env)
		for _, s := range j.Steps {
			checkEnv("job "+n+" step "+s.Name, s.Env)
		}
		r := j.runs()
		if strings.Contains(r, "fabricctl") && strings.Contains(j.If, "pull_request") && !strings.Contains(r, "plan") {
			continue // check only: no switch is contacted, no credentials needed
		}
		if strings.Contains(r, "fabricctl plan") || strings.Contains(r, "fabricctl apply") || strings.Contains(r, "fabricctl diff") {
			for e := range credEnv {
				if _, ok := j.Env[e]; !ok {
					t.Errorf("job %s talks to the switches but does not get %s from the secret store", n, e)
				}
			}
		}
		for _, bad := range []string{"set -x", "--interactive"} {
			if strings.Contains(r, bad) {
				t.Errorf("job %s runs %q", n, bad)
			}
		}
		for e := range credEnv {
			if regexp.MustCompile(`(echo|printf)[^\n]*\$\{?` + e).MatchString(r) {
				t.Errorf("job %s prints $%s", n, e)
			}
		}
	}
	// No secret reference hides anywhere else (a run line, a with: value).
	refs := regexp.MustCompile(`secrets\.[A-Za-z_]+`).FindAllIndex(data, -1)
	for _, r := range refs {
		line := string(data[lineStart(data, r[0]):lineEnd(data, r[0])])
		if !regexp.MustCompile(`^\s+[A-Z_]+: \$\{\{ secrets\.[A-Za-z_]+ \}\}$`).MatchString(line) {
			t.Errorf("secret used outside an env: mapping: %q", strings.TrimSpace(line))
		}
	}
}

func lineStart(b []byte, i int) int {
	for i > 0 && b[i-1] != '\n' {
		i--
	}
	return i
}

func lineEnd(b []byte, i int) int {
	for i < len(b) && b[i] != '\n' {
		i++
	}
	return i
}

// Every job installs the pinned release with .github/install-fabricctl.sh,
// which checks the binary's sha256 against the pin before running it
// (tools/imagebuild runs that script against a release built there). No job
// builds fabricctl from an unpinned source.
func TestInstallsPinnedRelease(t *testing.T) {
	wf, data := loadWorkflow(t)
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(wf.Env["FABRICCTL_VERSION"]) {
		t.Errorf("FABRICCTL_VERSION %q is not a release tag vX.Y.Z", wf.Env["FABRICCTL_VERSION"])
	}
	for _, k := range []string{"FABRICCTL_SHA256_AMD64", "FABRICCTL_SHA256_ARM64"} {
		if _, ok := wf.Env[k]; !ok {
			t.Errorf("the workflow env has no %s pin", k)
		}
	}
	for _, bad := range []string{"go install", "@latest", "@main"} {
		if strings.Contains(string(data), bad) {
			t.Errorf("%s contains %q: install the pinned release instead", workflowFile, bad)
		}
	}
	if _, err := os.Stat(".github/install-fabricctl.sh"); err != nil {
		t.Fatal(err)
	}
	for name, j := range wf.Jobs {
		installed := false
		for _, s := range j.Steps {
			if strings.TrimSpace(s.Run) == "bash .github/install-fabricctl.sh" {
				installed = true
				continue
			}
			if strings.Contains(s.Run, "fabricctl ") && !installed {
				t.Errorf("job %s runs fabricctl in step %q before installing the pinned release", name, s.Name)
			}
		}
		if !installed {
			t.Errorf("job %s does not install the pinned release", name)
		}
	}
}
