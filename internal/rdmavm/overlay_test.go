package rdmavm

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestOverlayIsNewc: GNU cpio lists the archive Overlay writes (the format
// the kernel unpacks, init/initramfs.c), parents before children, with the
// modes asked for and owner root.
func TestOverlayIsNewc(t *testing.T) {
	if _, err := exec.LookPath("cpio"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("cpio is not installed (scripts/install-deps.sh); CI=true needs it")
		}
		t.Skip("cpio is not installed (Debian package cpio)")
	}
	a := Overlay(map[string]File{
		"usr/bin/fabricctl":         {Data: []byte("#!/bin/sh\n"), Mode: 0o755},
		"root/.ssh/authorized_keys": {Data: []byte("ssh-ed25519 AAAA x\n"), Mode: 0o600},
		"etc/x":                     {Data: []byte("odd length")},
	})
	if len(a)%4 != 0 {
		t.Errorf("archive length %d is not a multiple of 4", len(a))
	}
	cmd := exec.Command("cpio", "-itv", "--quiet")
	cmd.Stdin = bytes.NewReader(a)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cpio -itv: %v\n%s", err, out)
	}
	want := []struct{ mode, name string }{
		{"drwxr-xr-x", "etc"}, {"drwx------", "root"}, {"drwx------", "root/.ssh"}, {"drwxr-xr-x", "usr"}, {"drwxr-xr-x", "usr/bin"},
		{"-rw-r--r--", "etc/x"}, {"-rw-------", "root/.ssh/authorized_keys"}, {"-rwxr-xr-x", "usr/bin/fabricctl"},
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(want) {
		t.Fatalf("cpio lists %d entries, want %d:\n%s", len(lines), len(want), out)
	}
	for i, w := range want {
		f := strings.Fields(lines[i])
		if len(f) < 3 || f[0] != w.mode || f[len(f)-1] != w.name || f[2] != "root" {
			t.Errorf("entry %d: %q, want %s %s owned by root", i, lines[i], w.mode, w.name)
		}
	}
}
