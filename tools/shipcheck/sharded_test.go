package shipcheck

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestWatchStatefulSet: pod1-sharded (the sharded component) renders
// fabricctl watch as a StatefulSet instead of the one-pod Deployment,
// with --shard's COUNT equal to its replicas and the INDEX taken from the
// pod's own name, and Prometheus scrapes every replica once under the job
// the alerts use: the ServiceMonitor selects the Service fabricctl-watch,
// whose selector takes the StatefulSet's pods, and not the headless
// governing Service (which would scrape each pod twice).
func TestWatchStatefulSet(t *testing.T) {
	var sts *appsv1.StatefulSet
	svcs := map[string]*corev1.Service{}
	var sm *monitoringv1.ServiceMonitor
	for _, o := range render(t, "examples/k8s/pod1-sharded") {
		switch v := o.obj.(type) {
		case *appsv1.Deployment:
			t.Errorf("Deployment %s rendered beside the sharded StatefulSet: every switch would be watched twice", v.Name)
		case *appsv1.StatefulSet:
			sts = v
		case *corev1.Service:
			svcs[v.Name] = v
		case *monitoringv1.ServiceMonitor:
			sm = v
		}
	}
	if sts == nil || sm == nil || svcs["fabricctl-watch"] == nil || svcs[sts.Spec.ServiceName] == nil {
		t.Fatalf("pod1-sharded must render the StatefulSet, its governing Service, the Service fabricctl-watch and the ServiceMonitor (got %v, %v, %v)", sts != nil, svcs, sm != nil)
	}
	if sts.Namespace != "fabricctl" {
		t.Errorf("StatefulSet in namespace %q, want fabricctl (beside its ConfigMap)", sts.Namespace)
	}
	c := sts.Spec.Template.Spec.Containers[0]
	var shard string
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--shard="); ok {
			shard = v
		}
	}
	m := regexp.MustCompile(`^\$\(POD_NAME\)/(\d+)$`).FindStringSubmatch(shard)
	if m == nil {
		t.Fatalf("--shard=%q: want $(POD_NAME)/COUNT", shard)
	}
	if count, _ := strconv.Atoi(m[1]); sts.Spec.Replicas == nil || int(*sts.Spec.Replicas) != count {
		t.Errorf("replicas %v with --shard COUNT %d: a shard would be watched by none or two", sts.Spec.Replicas, count)
	}
	var podName bool
	for _, e := range c.Env {
		podName = podName || e.Name == "POD_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name"
	}
	if !podName {
		t.Errorf("POD_NAME is not the pod's metadata.name: --shard would not get the ordinal")
	}
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(image) + `:v\d+\.\d+\.\d+`).MatchString(c.Image) {
		t.Errorf("image %q: want %s pinned to a release tag", c.Image, image)
	}
	pods := labels.Set(sts.Spec.Template.Labels)
	sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	scraped := 0
	for name, s := range svcs {
		if !sel.Matches(labels.Set(s.Labels)) {
			continue
		}
		if !labels.SelectorFromSet(s.Spec.Selector).Matches(pods) {
			t.Errorf("the ServiceMonitor selects Service %s, which does not select the watch pods", name)
		}
		scraped++
		if name != "fabricctl-watch" {
			t.Errorf("the ServiceMonitor selects Service %s too: each pod would be scraped twice (job %s)", name, name)
		}
	}
	if scraped == 0 {
		t.Errorf("the ServiceMonitor selects no Service of the watch pods")
	}
}
