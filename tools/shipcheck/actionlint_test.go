package shipcheck

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "fabricctl")); err != nil {
		t.Fatalf("repository root not found from tools/shipcheck: %v", err)
	}
	return root
}

// shellcheck finds the shellcheck binary. scripts/install-deps.sh installs
// it; without it actionlint would silently skip the run: scripts, so the
// test fails in CI and skips (saying why) elsewhere.
func shellcheck(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("shellcheck")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("shellcheck is not installed (scripts/install-deps.sh installs it)")
		}
		t.Skip("shellcheck is not installed (scripts/install-deps.sh installs it): skipping")
	}
	return p
}

// workflowProjects are the directories holding a .github/workflows: the
// repository itself, and the sample repositories under examples/.
func workflowProjects(t *testing.T) []string {
	t.Helper()
	root := repoRoot(t)
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() && d.Name() == "workflows" && filepath.Base(filepath.Dir(p)) == ".github" {
			dirs = append(dirs, filepath.Dir(filepath.Dir(p)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

func TestWorkflowsPassActionlint(t *testing.T) {
	sc := shellcheck(t)
	projects := workflowProjects(t)
	root := repoRoot(t)
	for _, want := range []string{root, filepath.Join(root, "examples", "gitops")} {
		found := false
		for _, p := range projects {
			found = found || p == want
		}
		if !found {
			t.Errorf("no .github/workflows found in %s", want)
		}
	}
	for _, dir := range projects {
		rel, _ := filepath.Rel(root, dir)
		t.Run(rel, func(t *testing.T) {
			// A real repository declares its self-hosted runner labels in
			// .github/actionlint.yaml; without one actionlint reports them
			// as unknown, so require the file.
			cfg := filepath.Join(dir, ".github", "actionlint.yaml")
			if _, err := os.Stat(cfg); err != nil {
				t.Fatalf("%s: %v", cfg, err)
			}
			var out bytes.Buffer
			l, err := actionlint.NewLinter(&out, &actionlint.LinterOptions{
				Shellcheck: sc,
				ConfigFile: cfg,
				LogWriter:  io.Discard,
				WorkingDir: root,
			})
			if err != nil {
				t.Fatal(err)
			}
			proj, err := actionlint.NewProject(dir)
			if err != nil {
				t.Fatal(err)
			}
			errs, err := l.LintDir(proj.WorkflowsDir(), proj)
			if err != nil {
				t.Fatal(err)
			}
			if len(errs) > 0 {
				t.Errorf("actionlint: %d problem(s):\n%s", len(errs), out.String())
			}
		})
	}
}

// actionlint really runs shellcheck: a workflow with a shell bug fails.
func TestActionlintCatchesShellBugs(t *testing.T) {
	sc := shellcheck(t)
	dir := t.TempDir()
	wf := filepath.Join(dir, ".github", "workflows", "bad.yml")
	if err := os.MkdirAll(filepath.Dir(wf), 0o755); err != nil {
		t.Fatal(err)
	}
	bad := "on: push\njobs:\n  a:\n    runs-on: [self-hosted, fabric-mgmt]\n    steps:\n      - run: |\n          for f in $(ls *.yaml); do echo $f; done\n"
	if err := os.WriteFile(wf, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	l, err := actionlint.NewLinter(&out, &actionlint.LinterOptions{Shellcheck: sc, LogWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.LintFile(wf, nil)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range errs {
		kinds = append(kinds, e.Kind)
	}
	joined := strings.Join(kinds, " ")
	if !strings.Contains(joined, "shellcheck") || !strings.Contains(joined, "runner-label") {
		t.Errorf("want shellcheck and runner-label findings (no config declares fabric-mgmt here), got %v:\n%s", kinds, out.String())
	}
}

// The shell scripts the release, the tests and the examples run pass
// shellcheck too.
func TestScriptsPassShellcheck(t *testing.T) {
	sc := shellcheck(t)
	root := repoRoot(t)
	scripts := []string{
		"scripts/build-release.sh",
		"scripts/test-tools.sh",
		"examples/gitops/.github/install-fabricctl.sh",
	}
	cmd := exec.Command(sc, append([]string{"--shell=bash", "--severity=style"}, scripts...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
}
