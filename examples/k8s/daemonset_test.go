// Package k8s_test checks the Kubernetes manifests under examples/k8s.
package k8s_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/fabricctl/fabricctl/intent"
)

type manifest struct {
	Kind     string                `yaml:"kind"`
	Metadata struct{ Name string } `yaml:"metadata"`
	Data     map[string]string     `yaml:"data"`
	Spec     struct {
		Template struct {
			Spec struct {
				HostNetwork bool `yaml:"hostNetwork"`
				Containers  []struct {
					Args            []string `yaml:"args"`
					SecurityContext struct {
						Privileged bool `yaml:"privileged"`
					} `yaml:"securityContext"`
					VolumeMounts []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
				Volumes []struct {
					Name      string                 `yaml:"name"`
					ConfigMap *struct{ Name string } `yaml:"configMap"`
					HostPath  *struct{ Path string } `yaml:"hostPath"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

func TestDaemonSet(t *testing.T) {
	b, err := os.ReadFile("daemonset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	docs := map[string]manifest{}
	for {
		var m manifest
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("daemonset.yaml: %v", err)
		}
		docs[m.Kind] = m
	}
	cm, ok := docs["ConfigMap"]
	if !ok {
		t.Fatal("no ConfigMap with the intent")
	}
	f, err := intent.Parse("daemonset.yaml#fabric.yaml", []byte(cm.Data["fabric.yaml"]))
	if err != nil {
		t.Fatalf("the ConfigMap's intent does not parse: %v", err)
	}
	if len(f.Hosts) == 0 {
		t.Errorf("the ConfigMap's intent has no hosts")
	}
	ds, ok := docs["DaemonSet"]
	if !ok {
		t.Fatal("no DaemonSet")
	}
	pod := ds.Spec.Template.Spec
	if !pod.HostNetwork {
		t.Errorf("hostNetwork is off: dcbnl would act on the pod's own netns")
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if !c.SecurityContext.Privileged {
		t.Errorf("container is not privileged: dcbnl SET and configfs mkdir need it")
	}
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"host apply", "--watch", "--root=/host", "--file=/etc/fabricctl/fabric.yaml", "--host=$(NODE_NAME)"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	hostPaths := map[string]string{}
	for _, v := range pod.Volumes {
		if v.HostPath != nil {
			hostPaths[v.Name] = v.HostPath.Path
		}
		if v.ConfigMap != nil && v.ConfigMap.Name != cm.Metadata.Name {
			t.Errorf("volume %s uses ConfigMap %q, want %q", v.Name, v.ConfigMap.Name, cm.Metadata.Name)
		}
	}
	for mount, host := range map[string]string{"/host/sys": "/sys", "/host/sys/kernel/config": "/sys/kernel/config"} {
		if got := hostPaths[mounts[mount]]; got != host {
			t.Errorf("%s is mounted from hostPath %q, want %q", mount, got, host)
		}
	}
}
