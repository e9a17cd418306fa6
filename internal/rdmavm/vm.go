// Package rdmavm boots Debian guests with soft-RoCE (rdma_rxe) under qemu so
// that tests can run fabricctl against a real RDMA stack: verbs, rdma_cm,
// configfs, GID tables and hw_counters of the kernel, perftest of the
// distribution.
//
// The image comes from scripts/rdmavm/build.sh (Debian's kernel and an
// initramfs made from the installed packages, cached by package versions).
// Each guest gets a second cpio archive appended to it with fabricctl and the
// run's SSH keys, a user-mode NIC whose SSH port is forwarded to 127.0.0.1,
// and a RoCE NIC joined to the other guest by a qemu stream netdev on a Unix
// socket. A stream, not qemu's UDP socket mode: over UDP the receiving
// qemu's socket buffer dropped RoCE packets under load (sequence errors,
// retransmissions, perftest stalls); over a stream a slow receiver pushes
// back on the sender's virtio queue, so the link is lossless. A Unix socket,
// not TCP: qemu's TCP socket netdev leaves Nagle on, and Nagle with delayed
// ACKs held every small RoCE packet ~30 ms (ib_write_lat's typical latency
// went from 0.3 ms to 30 ms). Two guests, not two network namespaces in one: the rxe of
// Linux 6.1 opens its RoCE UDP socket in the initial namespace only
// (drivers/infiniband/sw/rxe/rxe_net.c, rxe_net_ipv4_init:
// rxe_setup_udp_tunnel(&init_net, ...)), so an rxe device on a netdev in
// another namespace cannot receive.
package rdmavm

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// ErrUnavailable is wrapped when qemu, the kernel or a package the image
// needs is not installed.
var ErrUnavailable = errors.New("rdmavm: not available")

// Image is a built VM image.
type Image struct {
	Dir      string // the cache directory
	Kernel   string // vmlinuz
	Base     string // base.cpio.gz
	KVer     string // kernel release
	Packages string // package=version lines the cache key covers
	Cached   bool   // reused from an earlier run
}

// Build runs scripts/rdmavm/build.sh of the repository at root.
func Build(ctx context.Context, root string) (*Image, error) {
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		return nil, fmt.Errorf("%w: qemu-system-x86_64 is not installed (Debian package qemu-system-x86)", ErrUnavailable)
	}
	script := filepath.Join(root, "scripts", "rdmavm", "build.sh")
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 2 {
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, strings.TrimSpace(stderr.String()))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %s", script, err, strings.TrimSpace(stderr.String()))
	}
	dir := strings.TrimSpace(string(out))
	img := &Image{Dir: dir, Kernel: filepath.Join(dir, "vmlinuz"), Base: filepath.Join(dir, "base.cpio.gz")}
	for _, f := range []string{img.Kernel, img.Base} {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("%s printed %s but: %w", script, dir, err)
		}
	}
	kv, _ := os.ReadFile(filepath.Join(dir, "kver"))
	pk, _ := os.ReadFile(filepath.Join(dir, "packages"))
	img.KVer, img.Packages = strings.TrimSpace(string(kv)), string(pk)
	img.Cached = !strings.Contains(stderr.String(), "rdmavm: built")
	return img, nil
}

// File is one file of an overlay archive.
type File struct {
	Data []byte
	Mode os.FileMode // permission bits; 0 = 0644
}

// Overlay returns a newc cpio archive (owner root) with files, keyed by
// their path in the guest (no leading slash), and their parent directories.
func Overlay(files map[string]File) []byte {
	var b bytes.Buffer
	ino := 1
	dirs := map[string]bool{}
	hdr := func(name string, mode uint32, size int) {
		fmt.Fprintf(&b, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
			ino, mode, 0, 0, 1, 0, size, 0, 0, 0, 0, len(name)+1, 0)
		ino++
		b.WriteString(name)
		b.WriteByte(0)
		pad4(&b)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for d := filepath.Dir(n); d != "." && !dirs[d]; d = filepath.Dir(d) {
			dirs[d] = true
		}
	}
	ds := make([]string, 0, len(dirs))
	for d := range dirs {
		ds = append(ds, d)
	}
	sort.Strings(ds) // a parent sorts before its children
	for _, d := range ds {
		mode := uint32(0o40755)
		if d == "root" || strings.HasSuffix(d, "/.ssh") {
			mode = 0o40700
		}
		hdr(d, mode, 0)
	}
	for _, n := range names {
		f := files[n]
		perm := f.Mode.Perm()
		if perm == 0 {
			perm = 0o644
		}
		hdr(n, 0o100000|uint32(perm), len(f.Data))
		b.Write(f.Data)
		pad4(&b)
	}
	hdr("TRAILER!!!", 0, 0)
	return b.Bytes()
}

func pad4(b *bytes.Buffer) {
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
}

// Keys are the SSH keys of one run: the guests' host key and the client key.
type Keys struct {
	HostKeyPEM   []byte
	HostPub      ssh.PublicKey
	ClientKeyPEM []byte
	ClientPub    ssh.PublicKey
}

// NewKeys generates ed25519 keys.
func NewKeys() (*Keys, error) {
	k := &Keys{}
	for _, dst := range []struct {
		pem *[]byte
		pub *ssh.PublicKey
	}{{&k.HostKeyPEM, &k.HostPub}, {&k.ClientKeyPEM, &k.ClientPub}} {
		pub, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		blk, err := ssh.MarshalPrivateKey(priv, "")
		if err != nil {
			return nil, err
		}
		*dst.pem = pem.EncodeToMemory(blk)
		if *dst.pub, err = ssh.NewPublicKey(pub); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// KnownHostsLine is the known_hosts line of a guest's forwarded SSH port.
func (k *Keys) KnownHostsLine(port int) string {
	return knownhosts.Line([]string{knownhosts.Normalize("127.0.0.1:" + strconv.Itoa(port))}, k.HostPub)
}

// Spec describes one guest.
type Spec struct {
	Name     string // hostname, as the intent names the host
	Addr     string // the RoCE netdev's address, CIDR: 192.168.77.1/24
	Netdev   string // the RoCE netdev's name (default roce0)
	IBDev    string // the rxe device's name (default rxe0)
	Index    int    // 1, 2, ...: MACs end with it
	SSHPort  int    // 127.0.0.1 port forwarded to the guest's port 22
	Link     string // the link's Unix socket path
	Listen   bool   // this guest's qemu listens on Link, the other connects
	Console  string // file the serial console is written to
	MemoryMB int    // default 768
}

// Guest is a running qemu.
type Guest struct {
	Spec Spec
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	once sync.Once
}

// FreePort returns a TCP port on 127.0.0.1 that nothing listens on right now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Boot starts a guest from img with overlay appended to its initramfs
// (written next to the console file). It returns once qemu runs; the guest
// is ready when its sshd answers (see the tests' wait).
func Boot(img *Image, overlay []byte, s Spec) (*Guest, error) {
	if s.Netdev == "" {
		s.Netdev = "roce0"
	}
	if s.IBDev == "" {
		s.IBDev = "rxe0"
	}
	if s.MemoryMB == 0 {
		s.MemoryMB = 768
	}
	initrd := s.Console + ".initrd"
	if err := writeInitrd(initrd, img.Base, overlay); err != nil {
		return nil, err
	}
	con, err := os.Create(s.Console)
	if err != nil {
		return nil, err
	}
	mgmt := fmt.Sprintf("52:54:00:00:01:%02x", s.Index)
	roce := fmt.Sprintf("52:54:00:77:00:%02x", s.Index)
	args := []string{
		"-accel", "tcg", "-cpu", "max", "-m", strconv.Itoa(s.MemoryMB), "-smp", "1",
		"-nographic", "-no-reboot", "-nodefaults", "-serial", "stdio",
		"-kernel", img.Kernel, "-initrd", initrd,
		"-append", strings.Join([]string{"console=ttyS0", "panic=-1", "quiet",
			"rdmavm.name=" + s.Name, "rdmavm.addr=" + s.Addr, "rdmavm.mgmt=" + mgmt, "rdmavm.roce=" + roce,
			"rdmavm.netdev=" + s.Netdev, "rdmavm.ibdev=" + s.IBDev}, " "),
		"-netdev", fmt.Sprintf("user,id=mgmt,restrict=on,hostfwd=tcp:127.0.0.1:%d-:22", s.SSHPort),
		"-device", "virtio-net-pci,netdev=mgmt,mac=" + mgmt,
		"-netdev", fmt.Sprintf("stream,id=roce,server=%s,addr.type=unix,addr.path=%s", map[bool]string{true: "on", false: "off"}[s.Listen], s.Link),
		"-device", "virtio-net-pci,netdev=roce,mac=" + roce,
	}
	cmd := exec.Command("qemu-system-x86_64", args...)
	cmd.Stdout, cmd.Stderr = con, con
	cmd.Stdin = nil
	if err := cmd.Start(); err != nil {
		con.Close()
		return nil, fmt.Errorf("qemu for %s: %w", s.Name, err)
	}
	g := &Guest{Spec: s, cmd: cmd, done: make(chan struct{})}
	go func() {
		g.err = cmd.Wait()
		con.Close()
		close(g.done)
	}()
	return g, nil
}

// writeInitrd writes base, zero padding to four bytes (the kernel looks for
// a following uncompressed archive at an aligned offset, init/initramfs.c
// unpack_to_rootfs), then overlay.
func writeInitrd(path, base string, overlay []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	in, err := os.Open(base)
	if err != nil {
		f.Close()
		return err
	}
	n, err := io.Copy(f, in)
	in.Close()
	if err == nil {
		_, err = f.Write(make([]byte, (4-n%4)%4))
	}
	if err == nil {
		_, err = f.Write(overlay)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// WaitListening waits until g's qemu listens on its link socket (a
// listening entry in /proc/net/unix, so that the check does not take the
// one connection qemu accepts), qemu exits or ctx ends. Start the connecting
// guest after it: qemu 7.2 does not retry a refused connect.
func (g *Guest) WaitListening(ctx context.Context) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if b, err := os.ReadFile("/proc/net/unix"); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				// Num RefCount Protocol Flags Type St Inode Path; Flags
				// 00010000 is __SO_ACCEPTCON, a listening socket.
				f := strings.Fields(line)
				if len(f) == 8 && f[3] == "00010000" && f[7] == g.Spec.Link {
					return nil
				}
			}
		}
		select {
		case <-g.done:
			return fmt.Errorf("guest %s: qemu exited (%v) before listening on %s:\n%s", g.Spec.Name, g.err, g.Spec.Link, g.ConsoleTail(30))
		case <-ctx.Done():
			return fmt.Errorf("guest %s: qemu does not listen on %s: %w", g.Spec.Name, g.Spec.Link, ctx.Err())
		case <-t.C:
		}
	}
}

// Done is closed when qemu exits.
func (g *Guest) Done() <-chan struct{} { return g.done }

// Err is qemu's exit, once Done is closed.
func (g *Guest) Err() error { return g.err }

// Stop kills qemu and waits for it.
func (g *Guest) Stop() {
	g.once.Do(func() {
		if g.cmd.Process != nil {
			_ = g.cmd.Process.Kill()
		}
		<-g.done
	})
}

// ConsoleTail returns the last lines of the guest's serial console.
func (g *Guest) ConsoleTail(n int) string {
	b, err := os.ReadFile(g.Spec.Console)
	if err != nil {
		return err.Error()
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// WaitConsole waits until the console shows s, qemu exits or ctx ends.
func (g *Guest) WaitConsole(ctx context.Context, s string) error {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		if b, err := os.ReadFile(g.Spec.Console); err == nil && bytes.Contains(b, []byte(s)) {
			return nil
		}
		select {
		case <-g.done:
			return fmt.Errorf("guest %s: qemu exited (%v) before %q:\n%s", g.Spec.Name, g.err, s, g.ConsoleTail(30))
		case <-ctx.Done():
			return fmt.Errorf("guest %s: no %q on the console: %w\n%s", g.Spec.Name, s, ctx.Err(), g.ConsoleTail(30))
		case <-t.C:
		}
	}
}
