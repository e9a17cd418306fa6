package shipcheck

import (
	"regexp"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// TestWatchDeployment: what fabricctl watch needs from the rendered
// overlay: one replica running `watch` non-root on the intent ConfigMap
// (under a fixed name, so an update is reloaded rather than a new pod),
// the credentials Secret at the directory the intent's credential files
// are in, a Service on the metrics port, and a ServiceMonitor selecting it
// under the job name the example alerts use.
func TestWatchDeployment(t *testing.T) {
	var dep *appsv1.Deployment
	var svc *corev1.Service
	var sm *monitoringv1.ServiceMonitor
	cms := map[string]*corev1.ConfigMap{}
	for _, o := range render(t, "examples/k8s/pod1") {
		switch v := o.obj.(type) {
		case *appsv1.Deployment:
			dep = v
		case *corev1.Service:
			svc = v
		case *monitoringv1.ServiceMonitor:
			sm = v
		case *corev1.ConfigMap:
			cms[v.Name] = v
		}
	}
	if dep == nil || svc == nil || sm == nil {
		t.Fatalf("pod1 must render the watch Deployment, its Service and ServiceMonitor (got %v, %v, %v)", dep != nil, svc != nil, sm != nil)
	}
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 1 {
		t.Errorf("replicas %v: two watch pods would subscribe every switch twice", dep.Spec.Replicas)
	}
	for k, v := range dep.Spec.Selector.MatchLabels {
		if dep.Spec.Template.Labels[k] != v {
			t.Errorf("selector %s=%s does not match the pod template's labels %v", k, v, dep.Spec.Template.Labels)
		}
	}
	pod := dep.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(image) + `:v\d+\.\d+\.\d+(@sha256:[0-9a-f]{64})?$`).MatchString(c.Image) {
		t.Errorf("image %q: want %s pinned to a release tag", c.Image, image)
	}
	if len(c.Args) == 0 || c.Args[0] != "watch" {
		t.Fatalf("args %q do not run fabricctl watch", c.Args)
	}
	flag := func(name string) string {
		for _, a := range c.Args {
			if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
				return v
			}
		}
		return ""
	}
	// Non-root, nothing to escalate.
	psc, sc := pod.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("watch must run as non-root without privilege escalation and with every capability dropped")
	}
	// The Go heap's soft limit sits under the container's memory limit.
	var memLimit string
	for _, e := range c.Env {
		if e.Name == "GOMEMLIMIT" {
			memLimit = e.Value
		}
	}
	lim := c.Resources.Limits.Memory()
	if mib, ok := strings.CutSuffix(memLimit, "MiB"); !ok || lim.IsZero() || atoi(mib)<<20 >= lim.Value() || atoi(mib)<<20 < lim.Value()/2 {
		t.Errorf("GOMEMLIMIT %q with a memory limit of %s: want NMiB between half the limit and the limit", memLimit, lim)
	}
	if pod.HostNetwork {
		t.Errorf("watch has no business on the host network")
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m
	}
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v
	}
	// The intent: --file is in the ConfigMap's mount, and the ConfigMap is
	// rendered under the name the volume uses (no hash: updates reach the
	// running pod and are reloaded).
	file := flag("file")
	var intent *corev1.ConfigMap
	for name, m := range mounts {
		v := vols[name]
		if v.ConfigMap != nil && strings.HasPrefix(file, m.MountPath+"/") {
			if !m.ReadOnly {
				t.Errorf("%s is writable", m.MountPath)
			}
			if v.ConfigMap.Name != "fabricctl-watch-intent" {
				t.Errorf("watch mounts ConfigMap %q: a generated name with a hash makes every intent update a new pod (every switch reconnects) instead of a reload; generate fabricctl-watch-intent with disableNameSuffixHash", v.ConfigMap.Name)
			}
			intent = cms[v.ConfigMap.Name]
			if intent == nil {
				t.Fatalf("--file=%s: the volume's ConfigMap %q is not rendered (generated names carry a hash; watch's must not)", file, v.ConfigMap.Name)
			}
			if _, ok := intent.Data[strings.TrimPrefix(file, m.MountPath+"/")]; !ok {
				t.Errorf("ConfigMap %s has no key for %s", intent.Name, file)
			}
		}
	}
	if intent == nil {
		t.Fatalf("--file=%q is not in a mounted ConfigMap", file)
	}
	if flag("reload-interval") == "" || flag("reload-interval") == "0" || flag("reload-interval") == "0s" {
		t.Errorf("--reload-interval %q: an updated ConfigMap would not be reloaded", flag("reload-interval"))
	}
	// The credentials: the Secret is mounted where the intent's switches
	// read their credential files.
	var secretDir string
	for name, m := range mounts {
		if v := vols[name]; v.Secret != nil {
			secretDir = m.MountPath
			if v.Secret.SecretName != "fabricctl-switch-credentials" {
				t.Errorf("secret %q, want fabricctl-switch-credentials (README, base/watch-deployment.yaml)", v.Secret.SecretName)
			}
			if !m.ReadOnly {
				t.Errorf("%s is writable", m.MountPath)
			}
		}
	}
	if secretDir == "" {
		t.Fatalf("no Secret is mounted for the switch credentials")
	}
	for _, key := range []string{"usernameFile: " + secretDir + "/", "passwordFile: " + secretDir + "/"} {
		if !strings.Contains(intent.Data["fabric.yaml"], key) {
			t.Errorf("the intent's switches do not read credentials from the Secret (%q not in fabric.yaml)", key)
		}
	}
	if strings.Contains(strings.ToLower(intent.Data["fabric.yaml"]), "password:") {
		t.Errorf("a password in the intent ConfigMap")
	}
	// Metrics: the container port --listen names, the Service on it, the
	// probes on /healthz, the ServiceMonitor on the Service.
	listen := flag("listen")
	var port corev1.ContainerPort
	for _, p := range c.Ports {
		if strings.HasSuffix(listen, ":"+itoa(p.ContainerPort)) {
			port = p
		}
	}
	if port.Name == "" {
		t.Fatalf("--listen=%s: no named container port", listen)
	}
	for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port.String() != port.Name {
			t.Errorf("probe %+v: want GET /healthz on port %s", p, port.Name)
		}
	}
	for k, v := range svc.Spec.Selector {
		if dep.Spec.Template.Labels[k] != v {
			t.Errorf("Service %s selects %s=%s, which the watch pod lacks", svc.Name, k, v)
		}
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != port.Name {
		t.Fatalf("Service %s ports %+v: want one targeting %s", svc.Name, svc.Spec.Ports, port.Name)
	}
	if svc.Name != "fabricctl-watch" {
		t.Errorf("Service %s: the ServiceMonitor's job label is the Service name, and the alerts expect job=\"fabricctl-watch\"", svc.Name)
	}
	for k, v := range sm.Spec.Selector.MatchLabels {
		if svc.Labels[k] != v {
			t.Errorf("ServiceMonitor selects %s=%s, which Service %s lacks", k, v, svc.Name)
		}
	}
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != svc.Spec.Ports[0].Name || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("ServiceMonitor endpoints %+v: want /metrics on port %s", sm.Spec.Endpoints, svc.Spec.Ports[0].Name)
	}
	if sm.Namespace != dep.Namespace || svc.Namespace != dep.Namespace {
		t.Errorf("namespaces: Deployment %s, Service %s, ServiceMonitor %s", dep.Namespace, svc.Namespace, sm.Namespace)
	}
}

func atoi(s string) int64 {
	var n int64
	for _, ch := range s {
		if ch < '0' || ch > '9' {
			return -1
		}
		n = n*10 + int64(ch-'0')
	}
	return n
}

func itoa(n int32) string {
	s := ""
	if n == 0 {
		return "0"
	}
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

// TestWatchMetricsExposure: watch serves /metrics on the pod's own IP (its
// default is loopback, which a Service cannot reach), and a NetworkPolicy
// admits only Prometheus to that port of the watch pod.
func TestWatchMetricsExposure(t *testing.T) {
	var dep *appsv1.Deployment
	var np *networkingv1.NetworkPolicy
	for _, o := range render(t, "examples/k8s/pod1") {
		switch v := o.obj.(type) {
		case *appsv1.Deployment:
			dep = v
		case *networkingv1.NetworkPolicy:
			np = v
		}
	}
	if dep == nil || np == nil {
		t.Fatalf("pod1 must render the watch Deployment and its NetworkPolicy (got %v, %v)", dep != nil, np != nil)
	}
	c := dep.Spec.Template.Spec.Containers[0]
	var listen string
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--listen="); ok {
			listen = v
		}
	}
	podIP := false
	for _, e := range c.Env {
		if e.Name == "POD_IP" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP" {
			podIP = true
		}
	}
	if listen != "$(POD_IP):9464" || !podIP {
		t.Errorf("--listen=%q (POD_IP from status.podIP: %v): want $(POD_IP):9464, the pod's own address", listen, podIP)
	}
	for k, v := range np.Spec.PodSelector.MatchLabels {
		if dep.Spec.Template.Labels[k] != v {
			t.Errorf("NetworkPolicy selects %s=%s, not the watch pod (labels %v)", k, v, dep.Spec.Template.Labels)
		}
	}
	if len(np.Spec.PodSelector.MatchLabels) == 0 {
		t.Errorf("the NetworkPolicy selects every pod of the namespace")
	}
	if len(np.Spec.PolicyTypes) == 0 || np.Spec.PolicyTypes[0] != networkingv1.PolicyTypeIngress {
		t.Errorf("policyTypes %v: want Ingress", np.Spec.PolicyTypes)
	}
	if len(np.Spec.Ingress) != 1 {
		t.Fatalf("%d ingress rules, want 1 (Prometheus)", len(np.Spec.Ingress))
	}
	in := np.Spec.Ingress[0]
	if len(in.From) == 0 {
		t.Errorf("the ingress rule admits every source")
	}
	for _, f := range in.From {
		if f.IPBlock != nil || f.PodSelector == nil || len(f.PodSelector.MatchLabels) == 0 {
			t.Errorf("ingress from %+v: want Prometheus pods by label", f)
		}
	}
	if len(in.Ports) != 1 || in.Ports[0].Port == nil || in.Ports[0].Port.String() != "metrics" {
		t.Errorf("ingress ports %v: want the metrics port only", in.Ports)
	}
}
