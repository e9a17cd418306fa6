package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// `-f -` reads the command's own standard input (what run is given), not the
// process's: check and render see the intent piped to them.
func TestIntentFromInjectedStdin(t *testing.T) {
	const fabric = "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\npolicy: {preset: roce-lossless}\n" +
		"inventory:\n  switches:\n    - {name: leaf1, platform: sonic, address: '127.0.0.1:8080', ports: [{name: Ethernet0, speed: 100G}]}\n"
	for _, args := range [][]string{{"check", "-f", "-"}, {"render", "-f", "-"}} {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(fabric), &out, &errb)
		if code != ExitOK {
			t.Errorf("fabricctl %s with the intent on stdin exited %d: %s", strings.Join(args, " "), code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"render", "-f", "-"}, strings.NewReader(fabric), &out, &errb); code == ExitOK &&
		!strings.Contains(out.String(), "PORT_QOS_MAP") {
		t.Errorf("render of the piped intent lacks the SONiC PORT_QOS_MAP:\n%s", out.String())
	}
}
