package hostdrv

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/fabricctl/fabricctl/hostdrv/internal/dcbnl"
)

// fakeKernel is a test double for Kernel that plays the kernel and an mlx5
// driver: every dcbnl request is encoded to bytes and parsed back with
// dcbnl.ParseMessage (so the encoder is exercised), the state is kept per
// interface, and replies are kernel-format payloads. It counts writes.
type fakeKernel struct {
	mu     sync.Mutex
	nics   map[string]*fakeNIC
	writes int
	flaps  int // PFC writes that changed pfc_en (an mlx5 link flap)
	// sent are the dcbnl SET/DEL requests received, as wire bytes (seq 1, pid 0).
	sent [][]byte
	// onSetMTU, when set, runs after each MTU write (a test hook, e.g. to
	// cancel the apply's context there).
	onSetMTU func()
}

type fakeNIC struct {
	index, mtu int
	ieee       dcbnl.IEEE
	pause      Pause
	noDCB      bool // no dcbnl ops: EOPNOTSUPP as a netlink error (VF, veth)
	noPause    bool
	rejectPFC  bool // the driver answers IEEE_SET PFC with status -EINVAL
	mlx5       bool // one priority per DSCP; add replaces, del must match
	// pfcTraffic: pause frames flow, so the PFC requests/indications
	// counters move between two reads (a live lossless link).
	pfcTraffic bool
	// noBuffer: an mlx5 port whose receive buffer the driver does not
	// manage (!MLX5_BUFFER_SUPPORTED): mlx5e_dcbnl_ieee_getpfc then reports
	// delay 0 whatever cable length was set.
	noBuffer bool
}

func newFakeKernel(ifnames ...string) *fakeKernel {
	k := &fakeKernel{nics: map[string]*fakeNIC{}}
	for i, n := range ifnames {
		k.nics[n] = &fakeNIC{index: i + 2, mtu: 1500, mlx5: true, pause: Pause{Autoneg: true, RX: true, TX: true},
			ieee: dcbnl.IEEE{Ifname: n, ETS: &dcbnl.ETS{ETSCap: 8}, PFC: &dcbnl.PFC{Cap: 8, Delay: 7}, Apps: []dcbnl.App{},
				// mlx5 in firmware DCBX mode, cable length 7 m (MLX5E_DEFAULT_CABLE_LEN),
				// every priority in buffer 0 (the firmware's default layout).
				Buffer: &dcbnl.Buffer{Size: [8]uint32{fakeCell * 512}, Total: fakeBufferTotal},
				DCBX:   DCBXVerIEEE | DCBXVerCEE, HasDCBX: true}}
	}
	return k
}

// fakeCell is the fake mlx5's buffer cell (port_buff_cell_sz; 128 B is the
// driver's fallback) and fakeBufferTotal its port buffer (total_size).
// fakeLosslessMin is the smallest lossless buffer it takes (mlx5 wants
// xoff + max_mtu + cell, xoff derived from speed, cable and MTU; a constant
// here).
const (
	fakeCell        = 128
	fakeBufferTotal = fakeCell * 4096
	fakeLosslessMin = 40000
)

func (k *fakeKernel) nic(n string) (*fakeNIC, error) {
	if x, ok := k.nics[n]; ok {
		return x, nil
	}
	return nil, syscall.ENODEV
}

func (k *fakeKernel) Link(ifname string) (int, int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n, err := k.nic(ifname)
	if err != nil {
		return 0, 0, err
	}
	return n.index, n.mtu, nil
}

func (k *fakeKernel) SetMTU(ifname string, mtu int) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	n, err := k.nic(ifname)
	if err != nil {
		return err
	}
	k.writes++
	n.mtu = mtu
	if k.onSetMTU != nil {
		k.onSetMTU()
	}
	return nil
}

func (k *fakeKernel) Pause(ifname string) (Pause, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n, err := k.nic(ifname)
	if err != nil {
		return Pause{}, err
	}
	if n.noPause {
		return Pause{}, syscall.EOPNOTSUPP
	}
	return n.pause, nil
}

func (k *fakeKernel) SetPause(ifname string, p Pause) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	n, err := k.nic(ifname)
	if err != nil {
		return err
	}
	k.writes++
	n.pause = p
	return nil
}

func (k *fakeKernel) DCB(req dcbnl.Request) ([][]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	raw, err := req.Encode(1, 0)
	if err != nil {
		return nil, err
	}
	_, r, err := dcbnl.ParseMessage(raw)
	if err != nil {
		return nil, syscall.EINVAL
	}
	n, err := k.nic(r.Ifname())
	if err != nil {
		return nil, err
	}
	if n.noDCB {
		return nil, syscall.EOPNOTSUPP
	}
	if r.Type == dcbnl.RTMSetDCB {
		k.sent = append(k.sent, raw)
	}
	switch r.Cmd {
	case dcbnl.CmdIEEEGet:
		s := n.ieee
		if n.pfcTraffic && s.PFC != nil {
			pfc := *s.PFC
			for p := range pfc.Requests {
				n.ieee.PFC.Requests[p] += uint64(p + 1)
				n.ieee.PFC.Indications[p] += uint64(2 * (p + 1))
			}
			s.PFC = &pfc
		}
		if n.noBuffer && s.PFC != nil {
			pfc := *s.PFC
			pfc.Delay = 0
			s.PFC = &pfc
		}
		if n.noBuffer {
			// mlx5e_dcbnl_getbuffer fails with EOPNOTSUPP and
			// dcbnl_ieee_fill leaves DCB_ATTR_DCB_BUFFER out.
			s.Buffer = nil
		}
		if n.mlx5 && s.ETS != nil {
			// mlx5e_dcbnl_ieee_getets never fills in willing: it reads 0.
			// mlx5e_dcbnl_ieee_getets reads the firmware's bandwidth
			// allocation: a strict TC reads back 100 % (MLX5E_MAX_BW_ALLOC,
			// what mlx5e_build_tc_tx_bw programs for it), whatever was sent.
			ets := *s.ETS
			ets.Willing = 0
			for tc := range ets.TCTxBW {
				if ets.TSA[tc] == dcbnl.TSAStrict {
					ets.TCTxBW[tc] = 100
				}
			}
			s.ETS = &ets
		}
		return [][]byte{s.Payload()}, nil
	case dcbnl.CmdSDCBX:
		k.writes++
		for _, a := range r.Attrs {
			if a.Kind() == dcbnl.AttrDCBX {
				if a.Data[0]&DCBXVerCEE != 0 {
					return [][]byte{dcbnl.StatusPayload(r.Cmd, 1)}, nil // mlx5: no CEE
				}
				n.ieee.DCBX = a.Data[0]
			}
		}
		return [][]byte{dcbnl.StatusPayload(r.Cmd, 0)}, nil
	case dcbnl.CmdIEEESet, dcbnl.CmdIEEEDel:
		k.writes++
		return [][]byte{dcbnl.StatusPayload(r.Cmd, k.ieeeSetDel(n, r))}, nil
	}
	return nil, syscall.EOPNOTSUPP
}

func (k *fakeKernel) ieeeSetDel(n *fakeNIC, r dcbnl.Request) int8 {
	for _, a := range r.Attrs {
		if a.Kind() != dcbnl.AttrIEEE {
			continue
		}
		for _, c := range a.Nested {
			switch c.Kind() {
			case dcbnl.AttrIEEEPFC:
				if n.rejectPFC {
					return -int8(syscall.EINVAL)
				}
				var p dcbnl.PFC
				if err := p.UnmarshalBinary(c.Data); err != nil {
					return -int8(syscall.EINVAL)
				}
				if p.Enable != n.ieee.PFC.Enable {
					k.flaps++
				}
				n.ieee.PFC.Enable = p.Enable
				if !n.mlx5 || p.Delay > 0 && p.Delay < 1000 { // mlx5 ignores 0 and >= MLX5E_MAX_CABLE_LENGTH
					n.ieee.PFC.Delay = p.Delay
				}
			case dcbnl.AttrIEEEBuffer:
				if st := n.setBuffer(c.Data); st != 0 {
					return st
				}
			case dcbnl.AttrIEEEETS:
				var e dcbnl.ETS
				if err := e.UnmarshalBinary(c.Data); err != nil {
					return -int8(syscall.EINVAL)
				}
				e.ETSCap = n.ieee.ETS.ETSCap
				*n.ieee.ETS = e
			case dcbnl.AttrIEEEAppTable:
				for _, x := range c.Nested {
					var app dcbnl.App
					if err := app.UnmarshalBinary(x.Data); err != nil {
						return -int8(syscall.EINVAL)
					}
					if st := n.app(r.Cmd == dcbnl.CmdIEEESet, app); st != 0 {
						return st
					}
				}
			}
		}
	}
	return 0
}

// setBuffer plays mlx5e_dcbnl_setbuffer: EOPNOTSUPP without buffer
// support, EINVAL when the buffers do not fit the port buffer, and sizes
// rounded down to whole cells (port_set_buffer divides by the cell size).
// total_size is read-only: what the request carries is ignored.
func (n *fakeNIC) setBuffer(data []byte) int8 {
	if n.noBuffer || n.ieee.Buffer == nil {
		return -int8(syscall.EOPNOTSUPP)
	}
	var b dcbnl.Buffer
	if err := b.UnmarshalBinary(data); err != nil {
		return -int8(syscall.EINVAL)
	}
	cur := n.ieee.Buffer
	pfc := uint8(0)
	if n.ieee.PFC != nil {
		pfc = n.ieee.PFC.Enable
	}
	// lossless reports whether a PFC priority is mapped to buffer i.
	lossless := func(prio2buf [8]uint8, i int) bool {
		for pr, bu := range prio2buf {
			if int(bu) == i && pfc&(1<<pr) != 0 {
				return true
			}
		}
		return false
	}
	var sum uint32
	for i := range b.Size {
		if b.PrioBuffer[i] >= dcbnl.MaxTCs {
			return -int8(syscall.EINVAL)
		}
		if n.mlx5 {
			b.Size[i] -= b.Size[i] % fakeCell
			// mlx5e_port_manual_buffer_config: the new prio2buffer is
			// checked against the current sizes, then the new sizes.
			if b.PrioBuffer != cur.PrioBuffer && lossless(b.PrioBuffer, i) && cur.Size[i] < fakeLosslessMin {
				return -int8(syscall.ENOMEM)
			}
			if b.Size != cur.Size && lossless(b.PrioBuffer, i) && b.Size[i] < fakeLosslessMin {
				return -int8(syscall.ENOMEM)
			}
		}
		sum += b.Size[i]
	}
	if sum > n.ieee.Buffer.Total {
		return -int8(syscall.EINVAL)
	}
	b.Total = n.ieee.Buffer.Total
	*n.ieee.Buffer = b
	return 0
}

func (n *fakeNIC) app(add bool, app dcbnl.App) int8 {
	apps := n.ieee.Apps
	idx := -1
	for i, a := range apps {
		if a.Selector == app.Selector && a.Protocol == app.Protocol && (n.mlx5 || a.Priority == app.Priority) {
			idx = i
		}
	}
	switch {
	case add && idx >= 0 && n.mlx5:
		apps[idx] = app // mlx5 setapp replaces the DSCP's entry
	case add && idx < 0:
		apps = append(apps, app)
	case !add && idx < 0:
		return -int8(syscall.ENOENT)
	case !add:
		if apps[idx].Priority != app.Priority {
			return -int8(syscall.ENOENT) // mlx5: must match dscp2prio
		}
		apps = append(apps[:idx], apps[idx+1:]...)
	}
	n.ieee.Apps = apps
	return 0
}

// treeOpts says what the temp tree that mimics an mlx5 host has.
type treeOpts struct {
	ecn      string // "sysfs" (MLNX_OFED), "debugfs" (upstream cc_params) or "" (neither)
	configfs bool   // /sys/kernel/config/rdma_cm is there
	driver   string // default mlx5_core
	// memory puts the tree on tmpfs (/dev/shm) when there is one: sysfs and
	// configfs live in memory too, so benchmarks should not pay disk costs.
	memory bool
}

// mlx5Tree writes a directory tree that looks like an mlx5 host's /sys for
// the interfaces ifnames[i] <-> RDMA devices mlx5_i.
func mlx5Tree(t testing.TB, o treeOpts, ifnames ...string) string {
	t.Helper()
	root := t.TempDir()
	if o.memory {
		if d, err := os.MkdirTemp("/dev/shm", "fabricctl-tree-"); err == nil {
			root = d
			t.Cleanup(func() { os.RemoveAll(d) })
		}
	}
	w := func(name, content string) {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	drv := o.driver
	if drv == "" {
		drv = "mlx5_core"
	}
	if err := os.MkdirAll(filepath.Join(root, "sys/bus/pci/drivers", drv), 0o755); err != nil {
		t.Fatal(err)
	}
	if o.configfs {
		if err := os.MkdirAll(filepath.Join(root, "sys/kernel/config/rdma_cm"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i, ifn := range ifnames {
		pci := fmt.Sprintf("0000:3b:00.%d", i)
		ib := fmt.Sprintf("mlx5_%d", i)
		dev := "sys/devices/pci0000:3a/" + pci
		w(dev+"/net/"+ifn+"/mtu", "1500\n")
		rel := strings.TrimPrefix(dev, "sys/")
		link("../../bus/pci/drivers/"+drv, dev+"/driver")
		link("../../"+rel+"/net/"+ifn, "sys/class/net/"+ifn)
		link("../../../"+pci, dev+"/net/"+ifn+"/device") // as on sysfs: ../../../0000:3b:00.0
		link("../../"+rel+"/infiniband/"+ib, "sys/class/infiniband/"+ib)
		for g := range 4 {
			base := dev + "/infiniband/" + ib + "/ports/1/"
			// As on mlx5: the link-local GIDs (RoCE v1, v2) at 0 and 1, those
			// of the IPv4 address 10.0.<i>.1 (IPv4-mapped) at 2 and 3.
			gid := fmt.Sprintf("fe80:0000:0000:0000:0e42:a1ff:fe00:%04x", g)
			if g >= 2 {
				gid = fmt.Sprintf("0000:0000:0000:0000:0000:ffff:0a00:%02x01", i)
			}
			w(base+fmt.Sprintf("gids/%d", g), gid+"\n")
			typ := "IB/RoCE v1"
			if g%2 == 1 {
				typ = "RoCE v2"
			}
			w(base+fmt.Sprintf("gid_attrs/types/%d", g), typ+"\n")
			w(base+fmt.Sprintf("gid_attrs/ndevs/%d", g), ifn+"\n")
		}
		switch o.ecn {
		case "sysfs":
			for p := range 8 {
				w(fmt.Sprintf("%s/net/%s/ecn/roce_np/enable/%d", dev, ifn, p), "0\n")
				w(fmt.Sprintf("%s/net/%s/ecn/roce_rp/enable/%d", dev, ifn, p), "0\n")
			}
			w(dev+"/net/"+ifn+"/ecn/roce_np/cnp_dscp", "0\n")
			w(dev+"/net/"+ifn+"/ecn/roce_np/cnp_802p_prio", "0\n")
		case "debugfs":
			w("sys/kernel/debug/mlx5/"+pci+"/cc_params/np_cnp_dscp", "0\n")
			w("sys/kernel/debug/mlx5/"+pci+"/cc_params/np_cnp_prio", "0\n")
			w("sys/kernel/debug/mlx5/"+pci+"/cc_params/np_cnp_prio_mode", "1\n")
		}
	}
	return root
}

// countingFiles is a test double around DirFiles that counts writes and
// plays configfs: creating rdma_cm/<ibdev> makes ports/1/default_roce_* appear
// when the RDMA device exists, and fails with ENODEV otherwise.
type countingFiles struct {
	*DirFiles
	mu     sync.Mutex
	writes int
	log    []string
}

func (c *countingFiles) WriteFile(name string, data []byte) error {
	c.mu.Lock()
	c.writes++
	c.log = append(c.log, "write "+name)
	c.mu.Unlock()
	return c.DirFiles.WriteFile(name, data)
}

func (c *countingFiles) Mkdir(name string) error {
	c.mu.Lock()
	c.writes++
	c.log = append(c.log, "mkdir "+name)
	c.mu.Unlock()
	dev, ok := strings.CutPrefix(name, "sys/kernel/config/rdma_cm/")
	if !ok {
		return c.DirFiles.Mkdir(name)
	}
	if _, err := os.Stat(filepath.Join(c.Root, "sys/class/infiniband", dev)); err != nil {
		return syscall.ENODEV
	}
	if err := c.DirFiles.Mkdir(name); err != nil {
		return err
	}
	pdir := filepath.Join(c.Root, filepath.FromSlash(path.Join(name, "ports/1")))
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(pdir, "default_roce_tos"), []byte("0\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(pdir, "default_roce_mode"), []byte("IB/RoCE v1\n"), 0o644)
}
