// Package prometheus_test keeps the Prometheus examples true: the rules
// pass promtool's unit tests, the PrometheusRule carries the same rules,
// and the dashboard parses and queries only metrics fabricctl exports.
package prometheus_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/fabricctl/fabricctl/validate/watch"
)

var update = flag.Bool("update", false, "regenerate fabricctl-prometheusrule.yaml from fabricctl-rules.yaml")

const (
	rulesFile     = "fabricctl-rules.yaml"
	ruleTestFile  = "fabricctl-rules_test.yaml"
	operatorFile  = "fabricctl-prometheusrule.yaml"
	dashboardFile = "fabricctl-dashboard.json"
)

// promtool finds promtool; with CI=true a missing one fails the test.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is not installed (Debian package prometheus; scripts/install-deps.sh); CI=true needs it")
		}
		t.Skip("promtool is not installed (Debian package prometheus; scripts/install-deps.sh)")
	}
	return p
}

func TestPromtoolRules(t *testing.T) {
	pt := promtool(t)
	for _, args := range [][]string{{"check", "rules", rulesFile}, {"test", "rules", ruleTestFile}} {
		out, err := exec.Command(pt, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestEveryAlertIsUnitTested: each alert of the rules file has a promtool
// test case.
func TestEveryAlertIsUnitTested(t *testing.T) {
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string `yaml:"alertname"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	readYAML(t, ruleTestFile, &tests)
	tested := map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			tested[a.Alertname] = true
		}
	}
	for _, a := range alerts(t) {
		if !tested[a.Alert] {
			t.Errorf("alert %s has no promtool test in %s", a.Alert, ruleTestFile)
		}
	}
}

type rule struct {
	Alert string `yaml:"alert"`
	Expr  string `yaml:"expr"`
}

func alerts(t *testing.T) []rule {
	var doc struct {
		Groups []struct {
			Rules []rule `yaml:"rules"`
		} `yaml:"groups"`
	}
	readYAML(t, rulesFile, &doc)
	var out []rule
	for _, g := range doc.Groups {
		out = append(out, g.Rules...)
	}
	return out
}

func readYAML(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// operatorRule renders the PrometheusRule for the Prometheus Operator from
// the rules file: the same groups under spec.
func operatorRule(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	root := doc.Content[0]
	var groups *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "groups" {
			groups = root.Content[i+1]
		}
	}
	if groups == nil {
		t.Fatalf("%s has no groups", rulesFile)
	}
	str := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }
	mapping := func(kv ...*yaml.Node) *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Content: kv} }
	manifest := mapping(
		str("apiVersion"), str("monitoring.coreos.com/v1"),
		str("kind"), str("PrometheusRule"),
		str("metadata"), mapping(str("name"), str("fabricctl"), str("labels"), mapping(str("app.kubernetes.io/name"), str("fabricctl"))),
		str("spec"), mapping(str("groups"), groups),
	)
	var out bytes.Buffer
	out.WriteString("# Generated from fabricctl-rules.yaml: go test ./examples/prometheus -run TestPrometheusRule -update\n")
	out.WriteString("# The same alerts for the Prometheus Operator (kubectl apply -f); edit the rules file, not this.\n")
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(manifest); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestPrometheusRuleMatchesRules(t *testing.T) {
	want := operatorRule(t)
	if *update {
		if err := os.WriteFile(operatorFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(operatorFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not generated from %s: run go test ./examples/prometheus -run TestPrometheusRule -update", operatorFile, rulesFile)
	}
	// And semantically: spec.groups equals the rules file's groups.
	var rules, op map[string]any
	readYAML(t, rulesFile, &rules)
	readYAML(t, operatorFile, &op)
	spec, _ := op["spec"].(map[string]any)
	if op["kind"] != "PrometheusRule" || !reflect.DeepEqual(spec["groups"], rules["groups"]) {
		t.Errorf("%s spec.groups differ from %s groups", operatorFile, rulesFile)
	}
}

var metricRe = regexp.MustCompile(`\bfabricctl_[a-z0-9_]+\b`)

// checkExprMetrics: every fabricctl_ name in expr is a metric fabricctl exports.
func checkExprMetrics(t *testing.T, where, expr string) {
	t.Helper()
	names := metricRe.FindAllString(expr, -1)
	if len(names) == 0 && !strings.Contains(expr, "up{") {
		t.Errorf("%s: expr %q uses no fabricctl metric", where, expr)
	}
	for _, n := range names {
		if !slices.Contains(watch.MetricNames(), n) {
			t.Errorf("%s: %s is not a metric fabricctl exports (expr %q)", where, n, expr)
		}
	}
}

func TestRulesUseExportedMetrics(t *testing.T) {
	for _, a := range alerts(t) {
		checkExprMetrics(t, "alert "+a.Alert, a.Expr)
	}
}

// TestDashboard: the dashboard parses, has per-priority pause, drop and
// ECN panels, every query names only exported metrics, and every query is
// valid PromQL (promtool checks them as recording rules, with Grafana's
// variables filled in).
func TestDashboard(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if dash.Title == "" || dash.UID == "" || len(dash.Panels) == 0 {
		t.Fatalf("%s: no title, uid or panels", dashboardFile)
	}
	var exprs []string
	covered := map[string]bool{}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			checkExprMetrics(t, "panel "+p.Title, tg.Expr)
			exprs = append(exprs, tg.Expr)
			for _, m := range []string{watch.MetricPFCPause, watch.MetricQueueDrops, watch.MetricECNMarked} {
				if strings.Contains(tg.Expr, m) && strings.Contains(tg.Expr, "priority") && strings.Contains(tg.Expr, "port") {
					covered[m] = true
				}
			}
		}
	}
	for _, m := range []string{watch.MetricPFCPause, watch.MetricQueueDrops, watch.MetricECNMarked} {
		if !covered[m] {
			t.Errorf("no panel shows %s by switch, port and priority", m)
		}
	}
	for _, v := range dash.Templating.List {
		if q, ok := v.Query.(map[string]any); ok {
			checkExprMetrics(t, "variable "+v.Name, fmt.Sprint(q["query"]))
		}
	}
	pt := promtool(t)
	fill := strings.NewReplacer("$__rate_interval", "1m", "$switch", ".*", "$port", ".*", "$priority", ".*")
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, e := range exprs {
		q, _ := json.Marshal(fill.Replace(e))
		fmt.Fprintf(&rules, "      - record: dashboard:query%d\n        expr: %s\n", i, q)
	}
	f := filepath.Join(t.TempDir(), "dashboard-rules.yaml")
	if err := os.WriteFile(f, []byte(rules.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(pt, "check", "rules", f).CombinedOutput(); err != nil {
		t.Errorf("dashboard queries are not valid PromQL: %v\n%s", err, out)
	}
}
