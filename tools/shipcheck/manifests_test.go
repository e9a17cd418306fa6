package shipcheck

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// The kustomizations under examples/k8s: each is rendered with kustomize's
// own library, and every object of the output decodes strictly into the
// real Kubernetes API type. Overlays are what users apply; the base must
// render on its own too.
var kustomizations = []string{"examples/k8s/base", "examples/k8s/pod1", "examples/k8s/upstream-mlx5", "examples/k8s/pod1-sharded"}

// Image is what the release workflow pushes (.github/workflows/release.yml).
const image = "ghcr.io/fabricctl/fabricctl"

// kinds maps apiVersion/kind to the type the API server would decode into.
// A kind without a type here fails the test: add its type. The
// ServiceMonitor is the Prometheus Operator's own Go type.
var kinds = map[string]func() any{
	"monitoring.coreos.com/v1/ServiceMonitor": func() any { return &monitoringv1.ServiceMonitor{} },
	"v1/Namespace":                       func() any { return &corev1.Namespace{} },
	"v1/ConfigMap":                       func() any { return &corev1.ConfigMap{} },
	"v1/ServiceAccount":                  func() any { return &corev1.ServiceAccount{} },
	"v1/Service":                         func() any { return &corev1.Service{} },
	"apps/v1/DaemonSet":                  func() any { return &appsv1.DaemonSet{} },
	"apps/v1/Deployment":                 func() any { return &appsv1.Deployment{} },
	"networking.k8s.io/v1/NetworkPolicy": func() any { return &networkingv1.NetworkPolicy{} },
	"apps/v1/StatefulSet":                func() any { return &appsv1.StatefulSet{} },
}

type object struct {
	kind, name string
	raw        []byte
	obj        any
}

// render runs kustomize build on dir and strictly decodes every object.
func render(t *testing.T, dir string) []object {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	rm, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(repoRoot(t), dir))
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var out []object
	for _, r := range rm.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		o, err := decodeStrict(y)
		if err != nil {
			t.Errorf("kustomize build %s: %s %q: %v", dir, r.GetKind(), r.GetName(), err)
			continue
		}
		out = append(out, o)
	}
	return out
}

func decodeStrict(y []byte) (object, error) {
	var meta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(y, &meta); err != nil {
		return object{}, err
	}
	mk, ok := kinds[meta.APIVersion+"/"+meta.Kind]
	if !ok {
		return object{}, fmt.Errorf("no API type known for %s %s: add it to kinds", meta.APIVersion, meta.Kind)
	}
	obj := mk()
	// sigs.k8s.io/yaml's UnmarshalStrict rejects unknown and duplicate
	// fields, but it decodes with encoding/json, which matches field names
	// case-insensitively: "readonly" passes as "readOnly". The API server
	// decodes case-sensitively (sigs.k8s.io/json), so decode with that too.
	if err := yaml.UnmarshalStrict(y, obj); err != nil {
		return object{}, err
	}
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		return object{}, err
	}
	strict, err := kjson.UnmarshalStrict(j, mk(), kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return object{}, err
	}
	if len(strict) > 0 {
		return object{}, errors.Join(strict...)
	}
	return object{kind: meta.Kind, name: meta.Metadata.Name, raw: y, obj: obj}, nil
}

func TestManifestsDecodeStrictly(t *testing.T) {
	for _, dir := range kustomizations {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			objs := render(t, dir)
			if len(objs) == 0 {
				t.Fatalf("kustomize build %s rendered nothing", dir)
			}
		})
	}
	// Every YAML file under examples/k8s is a kustomization, a resource one
	// of them lists, or an intent a generator reads: nothing lies around
	// unchecked.
	used := map[string]bool{}
	var visit func(dir string)
	visit = func(dir string) {
		var k struct {
			Resources          []string
			Components         []string
			ConfigMapGenerator []struct{ Files []string } `json:"configMapGenerator"`
			Patches            []struct{ Path string }
		}
		b, err := os.ReadFile(filepath.Join(repoRoot(t), dir, "kustomization.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, &k); err != nil {
			t.Fatal(err)
		}
		used[filepath.Join(dir, "kustomization.yaml")] = true
		for _, r := range k.Resources {
			used[filepath.Join(dir, r)] = true
		}
		for _, c := range k.Components {
			visit(filepath.Join(dir, c)) // its files are rendered with the overlay
		}
		for _, p := range k.Patches {
			if p.Path != "" {
				used[filepath.Join(dir, p.Path)] = true
			}
		}
		for _, g := range k.ConfigMapGenerator {
			for _, f := range g.Files {
				used[filepath.Join(dir, f)] = true
			}
		}
	}
	for _, dir := range kustomizations {
		visit(dir)
	}
	_ = filepath.WalkDir(filepath.Join(repoRoot(t), "examples", "k8s"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || (!strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, ".yml")) {
			return err
		}
		rel, _ := filepath.Rel(repoRoot(t), p)
		if !used[rel] {
			t.Errorf("%s is not part of any kustomization this test renders", rel)
		}
		return nil
	})
}

// The strict decode is what catches a misspelt field: prove it on the
// real DaemonSet with one field misspelt, and with one unknown field.
func TestStrictDecodeCatchesMisspeltFields(t *testing.T) {
	var ds []byte
	for _, o := range render(t, "examples/k8s/pod1") {
		if o.kind == "DaemonSet" {
			ds = o.raw
		}
	}
	if ds == nil {
		t.Fatal("pod1 renders no DaemonSet")
	}
	for _, c := range []struct{ from, to string }{
		{"hostNetwork: true", "hostNetwrok: true"},
		{"readOnlyRootFilesystem: true", "readOnlyRootFilesystem: true\n          readOnlyRootFilesytem: true"},
		{"readOnly: true", "readonly: true"},
	} {
		bad := bytes.Replace(ds, []byte(c.from), []byte(c.to), 1)
		if bytes.Equal(bad, ds) {
			t.Fatalf("the rendered DaemonSet has no %q to misspell", c.from)
		}
		if _, err := decodeStrict(bad); err == nil {
			t.Errorf("%q -> %q decoded without error", c.from, c.to)
		}
	}
}

func TestHostAgentDaemonSet(t *testing.T) {
	objs := render(t, "examples/k8s/pod1")
	var ds *appsv1.DaemonSet
	var cm *corev1.ConfigMap
	var ns *corev1.Namespace
	for _, o := range objs {
		switch v := o.obj.(type) {
		case *appsv1.DaemonSet:
			ds = v
		case *corev1.ConfigMap:
			if strings.HasPrefix(v.Name, "fabricctl-intent-") { // the hashed one; watch has its own
				cm = v
			}
		case *corev1.Namespace:
			ns = v
		}
	}
	if ds == nil || cm == nil || ns == nil {
		t.Fatalf("pod1 must render a Namespace, the intent ConfigMap and the DaemonSet; got %d objects", len(objs))
	}
	if ns.Labels["pod-security.kubernetes.io/enforce"] != "privileged" {
		t.Errorf("namespace %s: Pod Security enforce %q; a privileged hostNetwork pod needs \"privileged\"", ns.Name, ns.Labels["pod-security.kubernetes.io/enforce"])
	}
	for _, o := range []string{ds.Namespace, cm.Namespace} {
		if o != ns.Name {
			t.Errorf("object in namespace %q, want %q", o, ns.Name)
		}
	}
	if _, ok := cm.Data["fabric.yaml"]; !ok {
		t.Errorf("ConfigMap %s has no fabric.yaml", cm.Name)
	}
	sel := ds.Spec.Selector.MatchLabels
	for k, v := range sel {
		if ds.Spec.Template.Labels[k] != v {
			t.Errorf("selector %s=%s does not match the pod template's labels %v", k, v, ds.Spec.Template.Labels)
		}
	}
	pod := ds.Spec.Template.Spec
	if !pod.HostNetwork {
		t.Errorf("hostNetwork is off: dcbnl would act on the pod's own netns")
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(image) + `:v\d+\.\d+\.\d+(@sha256:[0-9a-f]{64})?$`).MatchString(c.Image) {
		t.Errorf("image %q: want %s pinned to a release tag (vX.Y.Z, optionally @sha256:...), never :latest", c.Image, image)
	}
	sc := c.SecurityContext
	if sc == nil {
		t.Fatal("the container has no securityContext")
	}
	// Least privilege (the manifest's header cites the kernel sources):
	// NET_ADMIN and nothing else, no escalation, RuntimeDefault seccomp,
	// read-only root, no API token, no blanket toleration.
	if sc.Privileged != nil && *sc.Privileged {
		t.Errorf("container is privileged: NET_ADMIN is all the agent needs")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("allowPrivilegeEscalation is not false")
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("readOnlyRootFilesystem is not true")
	}
	if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || !slices.Equal(sc.Capabilities.Add, []corev1.Capability{"NET_ADMIN"}) {
		t.Errorf("capabilities %+v: want drop [ALL], add [NET_ADMIN]", sc.Capabilities)
	}
	seccomp := sc.SeccompProfile
	if seccomp == nil && pod.SecurityContext != nil {
		seccomp = pod.SecurityContext.SeccompProfile
	}
	if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("seccomp profile %+v: want RuntimeDefault", seccomp)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("the service-account token is mounted: the agent never calls the API server")
	}
	for _, tol := range pod.Tolerations {
		if tol.Key == "" {
			t.Errorf("toleration %+v tolerates every taint", tol)
		}
	}
	if sc.RunAsUser == nil || *sc.RunAsUser != 0 {
		t.Errorf("runAsUser is not 0: the image's default user is 65532, and the agent needs root")
	}
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"host apply", "--watch", "--root=/host", "--file=/etc/fabricctl/fabric.yaml", "--host=$(NODE_NAME)"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	if len(c.Command) != 0 {
		t.Errorf("command %q overrides the image's entrypoint", c.Command)
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m
	}
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v
	}
	for mount, host := range map[string]string{"/host/sys/class": "/sys/class", "/host/sys/devices": "/sys/devices", "/host/sys/bus": "/sys/bus",
		"/host/sys/kernel/config": "/sys/kernel/config"} {
		v := vols[mounts[mount].Name]
		if v.HostPath == nil || v.HostPath.Path != host {
			t.Errorf("%s is not mounted from hostPath %s (volume %+v)", mount, host, v)
		}
	}
	if !mounts["/host/sys/bus"].ReadOnly {
		t.Errorf("/host/sys/bus is writable: the agent only reads the driver links there")
	}
	// Not the whole /sys (its submounts would come along: debugfs,
	// securityfs), and debugfs only through the opt-in component.
	for _, v := range pod.Volumes {
		if v.HostPath != nil && (v.HostPath.Path == "/sys" || v.HostPath.Path == "/" || v.HostPath.Path == "/sys/kernel/debug") {
			t.Errorf("volume %s mounts hostPath %s", v.Name, v.HostPath.Path)
		}
	}
	intent := vols[mounts["/etc/fabricctl"].Name]
	if intent.ConfigMap == nil || intent.ConfigMap.Name != cm.Name {
		t.Errorf("/etc/fabricctl is not the generated ConfigMap %s (volume %+v)", cm.Name, intent)
	}
	if !mounts["/etc/fabricctl"].ReadOnly {
		t.Errorf("/etc/fabricctl is writable")
	}
	var nodeName bool
	for _, e := range c.Env {
		nodeName = nodeName || (e.Name == "NODE_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "spec.nodeName")
	}
	if !nodeName {
		t.Errorf("NODE_NAME does not come from spec.nodeName")
	}
}

// The DaemonSet and the GitOps workflow install the same pinned release:
// bumping one without the other is a mistake this catches.
func TestOneReleasePinned(t *testing.T) {
	var tag string
	for _, o := range render(t, "examples/k8s/pod1") {
		if ds, ok := o.obj.(*appsv1.DaemonSet); ok {
			tag = strings.SplitN(strings.TrimPrefix(ds.Spec.Template.Spec.Containers[0].Image, image+":"), "@", 2)[0]
		}
	}
	wf, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", "gitops", ".github", "workflows", "fabric.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var w struct{ Env map[string]string }
	if err := yaml.Unmarshal(wf, &w); err != nil {
		t.Fatal(err)
	}
	if got := w.Env["FABRICCTL_VERSION"]; got != tag {
		t.Errorf("examples/gitops installs FABRICCTL_VERSION %q, examples/k8s/pod1 runs image tag %q", got, tag)
	}
}

// kustomize itself refuses a misspelt field in a kustomization.yaml, so the
// rendering above covers those files too.
func TestKustomizationTyposFail(t *testing.T) {
	base := filepath.Join(repoRoot(t), "examples", "k8s", "base")
	dir := t.TempDir()
	entries, err := os.ReadDir(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(base, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "kustomization.yaml" {
			b = bytes.Replace(b, []byte("\nresources:"), []byte("\nresource:"), 1)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	_, err = k.Run(filesys.MakeFsOnDisk(), dir)
	if err == nil || !strings.Contains(err.Error(), `unknown field "resource"`) {
		t.Errorf("kustomize with \"resource:\" for \"resources:\": err %v, want one naming the field", err)
	}
	t.Logf("kustomize says: %v", err)
}

// The DaemonSet's and the watch Deployment's arguments are ones the real
// fabricctl accepts: its subcommand exists and every flag is in that
// subcommand's --help.
func TestHostAgentArgsAreFabricctlFlags(t *testing.T) {
	workloads := map[string][]string{}
	for _, o := range render(t, "examples/k8s/pod1") {
		switch v := o.obj.(type) {
		case *appsv1.DaemonSet:
			workloads["DaemonSet "+v.Name] = v.Spec.Template.Spec.Containers[0].Args
		case *appsv1.Deployment:
			workloads["Deployment "+v.Name] = v.Spec.Template.Spec.Containers[0].Args
		}
	}
	if len(workloads) != 2 {
		t.Fatalf("pod1 renders %d workloads (%v), want the DaemonSet and the watch Deployment", len(workloads), workloads)
	}
	for _, o := range render(t, "examples/k8s/pod1-sharded") {
		if v, ok := o.obj.(*appsv1.StatefulSet); ok {
			workloads["StatefulSet "+v.Name] = v.Spec.Template.Spec.Containers[0].Args
		}
	}
	bin := filepath.Join(t.TempDir(), "fabricctl")
	build := exec.Command("go", "build", "-o", bin, "./cmd/fabricctl")
	build.Dir = repoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/fabricctl: %v\n%s", err, out)
	}
	for what, args := range workloads {
		var sub []string
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				break
			}
			sub = append(sub, a)
		}
		if len(sub) == 0 {
			t.Errorf("%s: args %q start with no subcommand", what, args)
			continue
		}
		help, err := exec.Command(bin, append(sub, "--help")...).CombinedOutput()
		if err != nil {
			t.Errorf("%s: fabricctl %s --help: %v\n%s", what, strings.Join(sub, " "), err, help)
			continue
		}
		if !strings.Contains(string(help), "fabricctl "+strings.Join(sub, " ")) {
			t.Errorf("%s: fabricctl has no subcommand %q:\n%s", what, strings.Join(sub, " "), help)
			continue
		}
		for _, a := range args[len(sub):] {
			name, _, _ := strings.Cut(a, "=")
			if !strings.HasPrefix(name, "--") {
				t.Errorf("%s: argument %q: pass flags as --name=value", what, a)
				continue
			}
			if !regexp.MustCompile(`(?m)^\s+(-\w, )?` + regexp.QuoteMeta(name) + `\s`).Match(help) {
				t.Errorf("%s: fabricctl %s has no flag %s", what, strings.Join(sub, " "), name)
			}
		}
	}
}

// TestDebugfsIsOptIn: only the upstream-mlx5 overlay (through the
// host-debugfs component) mounts the node's debugfs into the host agent,
// and it adds no capability to do so.
func TestDebugfsIsOptIn(t *testing.T) {
	for dir, want := range map[string]bool{"examples/k8s/pod1": false, "examples/k8s/upstream-mlx5": true} {
		for _, o := range render(t, dir) {
			ds, ok := o.obj.(*appsv1.DaemonSet)
			if !ok {
				continue
			}
			got := false
			for _, v := range ds.Spec.Template.Spec.Volumes {
				got = got || (v.HostPath != nil && v.HostPath.Path == "/sys/kernel/debug")
			}
			if got != want {
				t.Errorf("%s: debugfs mounted %v, want %v", dir, got, want)
			}
			c := ds.Spec.Template.Spec.Containers[0]
			if c.SecurityContext == nil || c.SecurityContext.Capabilities == nil || !slices.Equal(c.SecurityContext.Capabilities.Add, []corev1.Capability{"NET_ADMIN"}) {
				t.Errorf("%s: capabilities %+v, want NET_ADMIN only", dir, c.SecurityContext)
			}
		}
	}
}
