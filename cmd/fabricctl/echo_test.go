package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHugeSwitchNameIsNotEchoed (issue 29): check of an intent whose switch
// name is 1 MiB prints a few lines, not the name: it is refused with its
// start and length. Before, check printed it whole twice on stdout (and
// apply four times on stderr).
func TestHugeSwitchNameIsNotEchoed(t *testing.T) {
	name := strings.Repeat("s", 1<<20)
	doc := "apiVersion: fabricctl.io/v1alpha1\nkind: Fabric\nmetadata: {name: echo}\npolicy: {preset: roce-lossless}\ninventory:\n  switches:\n" +
		"    - {name: " + name + ", platform: srlinux, address: \"127.0.0.1:57400\", portDefaults: {speed: 400G, cable: 3m}, ports: [{name: ethernet-1/1}]}\n"
	file := filepath.Join(t.TempDir(), "echo.yaml")
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "-f", file}, {"apply", "-f", file, "--backup-dir", filepath.Join(t.TempDir(), "b")}} {
		code, out, errOut := runCLI(t, t.Context(), args...)
		if code == ExitOK {
			t.Errorf("%s accepted a 1 MiB switch name", args[0])
		}
		if n := len(out) + len(errOut); n > 4096 {
			t.Errorf("%s printed %d bytes for a 1 MiB switch name (%d times the name)", args[0], n, strings.Count(out+errOut, name))
		}
	}
}
