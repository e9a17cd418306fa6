package watch_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/validate/watch"
)

// statsDouble is a test double of ethtool's driver statistics.
type statsDouble map[string]map[string]uint64

func (s statsDouble) Stats(iface string) (map[string]uint64, error) {
	m, ok := s[iface]
	if !ok {
		return nil, syscall.ENODEV
	}
	return m, nil
}

func TestHostCollector(t *testing.T) {
	f, err := intent.Parse("h.yaml", []byte(`apiVersion: fabricctl.io/v1alpha1
kind: Fabric
metadata: {name: h}
policy: {preset: roce-lossless}
inventory:
  hosts:
    - name: gpu1
      address: local
      nics:
        - {interface: eth0, rdma: mlx5_0, speed: 100G}
        - {interface: eth1, rdma: mlx5_1, speed: 100G}
`))
	if err != nil {
		t.Fatal(err)
	}
	hw := func(v string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(v + "\n")} }
	fsys := fstest.MapFS{
		"sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence":            hw("4"),
		"sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent":                hw("120"),
		"sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_ecn_marked_roce_packets": hw("130"),
		"sys/class/infiniband/mlx5_0/ports/1/hw_counters/rp_cnp_handled":             hw("7"),
		"sys/class/infiniband/mlx5_0/ports/1/hw_counters/rx_write_requests":          hw("99"),
		// mlx5_1 has no hw_counters: its NIC is unreadable
	}
	stats := statsDouble{"eth0": {"rx_prio3_pause": 11, "tx_prio3_pause": 12, "rx_prio5_pause": 50, "rx_prio3_discards": 2,
		"tx_pause_storm_error_events": 0, "rx_bytes": 1}, "eth1": {"tx_prio3_pause": 1}}
	hc := &watch.HostCollector{FS: fsys, Stats: stats}
	hc.SetIntent(f.Host("gpu1"), &f.Policy)
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(hc); err != nil {
		t.Fatal(err)
	}
	hc.SetDrift(3, nil)
	s := series(t, reg)
	want := map[string]float64{
		"fabricctl_host_rdma_out_of_sequence_total{device=mlx5_0,host=gpu1,interface=eth0,port=1}":    4,
		"fabricctl_host_cnp_sent_total{device=mlx5_0,host=gpu1,interface=eth0,port=1}":                120,
		"fabricctl_host_ecn_marked_roce_packets_total{device=mlx5_0,host=gpu1,interface=eth0,port=1}": 130,
		"fabricctl_host_cnp_handled_total{device=mlx5_0,host=gpu1,interface=eth0,port=1}":             7,
		"fabricctl_host_pfc_pause_frames_total{direction=rx,host=gpu1,interface=eth0,priority=3}":     11,
		"fabricctl_host_pfc_pause_frames_total{direction=tx,host=gpu1,interface=eth0,priority=3}":     12,
		"fabricctl_host_pfc_pause_frames_total{direction=tx,host=gpu1,interface=eth1,priority=3}":     1,
		"fabricctl_host_prio_discards_total{host=gpu1,interface=eth0,priority=3}":                     2,
		"fabricctl_host_pause_storm_events_total{host=gpu1,interface=eth0}":                           0,
		"fabricctl_drift_paths{host=gpu1,kind=host}":                                                  3,
		// mlx5_1's hw_counters are missing: the host is not fully readable.
		"fabricctl_target_up{host=gpu1,kind=host}": 0,
	}
	for k, v := range want {
		if got, ok := s[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	for k := range s {
		if strings.Contains(k, "priority=5") || strings.Contains(k, "mlx5_1") {
			t.Errorf("unexpected series %s (priority 5 is not in use; mlx5_1 is unreadable)", k)
		}
	}
	if len(s) != len(want) {
		t.Errorf("%d series, want %d: %v", len(s), len(want), s)
	}
	// Readable again, and a failed reconcile: up 0, drift not exported.
	fsys["sys/class/infiniband/mlx5_1/ports/1/hw_counters/np_cnp_sent"] = hw("0")
	s = series(t, reg)
	if s["fabricctl_target_up{host=gpu1,kind=host}"] != 1 {
		t.Errorf("host readable: target_up = %v, want 1", s["fabricctl_target_up{host=gpu1,kind=host}"])
	}
	hc.SetDrift(0, errors.New("netlink: permission denied"))
	s = series(t, reg)
	if _, ok := s["fabricctl_drift_paths{host=gpu1,kind=host}"]; ok || s["fabricctl_target_up{host=gpu1,kind=host}"] != 0 {
		t.Errorf("after a failed plan: %v; want target_up 0 and no drift series", s)
	}
}
