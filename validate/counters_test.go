package validate

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/remote"
	"github.com/fabricctl/fabricctl/switchdrv/transport"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
)

func TestDelta(t *testing.T) {
	before := Sample{"a": {"x": 10, "y": 5, "gone": 1}, "old": {"z": 1}, "empty": {}, "disjoint": {"p": 1}}
	after := Sample{"a": {"x": 15, "y": 2, "new": 9}, "fresh": {"z": 3}, "empty": {}, "disjoint": {"q": 1}}
	want := map[string]map[string]int64{"a": {"x": 5, "y": 2}, "empty": {}, "disjoint": {}}
	if diff := cmp.Diff(want, Delta(before, after)); diff != "" {
		t.Errorf("Delta mismatch (-want +got):\n%s", diff)
	}
}

func TestRDMACountersFS(t *testing.T) {
	dir := "sys/class/infiniband/mlx5_0/ports/1/hw_counters/"
	fsys := fstest.MapFS{
		dir + "out_of_sequence":            {Data: []byte("3\n")},
		dir + "np_cnp_sent":                {Data: []byte("120\n")},
		dir + "lifespan":                   {Data: []byte("10\n")},
		dir + "resp_cqe_error":             {Data: []byte("bogus\n")},
		dir + "np_ecn_marked_roce_packets": {Data: []byte("77\n")},
	}
	c := &RDMACounters{Host: "gpu1", Device: "mlx5_0", Port: 1, FS: fsys}
	got, err := c.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := Sample{"gpu1/rdma/mlx5_0/1": {"out_of_sequence": 3, "np_cnp_sent": 120, "lifespan": 10, "np_ecn_marked_roce_packets": 77}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Read mismatch (-want +got):\n%s", diff)
	}
	if _, err := (&RDMACounters{Host: "gpu1", Device: "../etc", Port: 1, FS: fsys}).Read(context.Background()); err == nil {
		t.Error("a device name with a path: want an error")
	}
}

// TestRDMACountersRunner reads a sysfs-shaped tree through grep over the
// local runner, the path the SSH runner takes on remote hosts.
func TestRDMACountersRunner(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "sys/class/infiniband/mlx5_0/ports/1/hw_counters")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"packet_seq_err": "4\n", "rp_cnp_handled": "900\n", "np_cnp_sent": "0\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := &RDMACounters{Host: "gpu1", Device: "mlx5_0", Port: 1, Runner: remote.Local{Name: "gpu1"}, SysRoot: root}
	got, err := c.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := Sample{"gpu1/rdma/mlx5_0/1": {"packet_seq_err": 4, "rp_cnp_handled": 900, "np_cnp_sent": 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Read mismatch (-want +got):\n%s", diff)
	}
	c.Device = "mlx5_9"
	if _, err := c.Read(context.Background()); err == nil {
		t.Error("missing device: want an error naming the host")
	}
}

func TestParseEthtoolStats(t *testing.T) {
	out := []byte(`NIC statistics:
     rx_packets: 1234
     rx_prio3_pause: 17
     tx_prio3_pause: 0
     rx_prio3_discards: 2
     ch0_arm: 5
     weird line
     tx_pause_storm_error_events: 0
`)
	want := map[string]uint64{"rx_packets": 1234, "rx_prio3_pause": 17, "tx_prio3_pause": 0, "rx_prio3_discards": 2, "ch0_arm": 5, "tx_pause_storm_error_events": 0}
	if diff := cmp.Diff(want, ParseEthtoolStats(out)); diff != "" {
		t.Errorf("ParseEthtoolStats mismatch (-want +got):\n%s", diff)
	}
}

// TestSwitchCountersTwin reads counters from B's device twin over real gNMI
// (transport.Client, Subscribe ONCE) for SONiC and SR Linux.
func TestSwitchCountersTwin(t *testing.T) {
	mustPath := func(s string) *gnmipb.Path {
		p, err := transport.ParsePath(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name     string
		platform intent.Platform
		port     string
		put      func(tw *twin.Twin) error
		want     Sample
	}{
		{
			name: "sonic COUNTERS_DB", platform: intent.PlatformSONiC, port: "Ethernet0",
			put: func(tw *twin.Twin) error {
				p := mustPath("/COUNTERS/Ethernet0")
				p.Target = "COUNTERS_DB"
				return tw.Put(p, map[string]any{
					"SAI_PORT_STAT_PFC_3_TX_PKTS": "40", "SAI_PORT_STAT_PFC_3_RX_PKTS": "2", "SAI_PORT_STAT_PFC_0_TX_PKTS": "0",
					"SAI_PORT_STAT_IF_IN_OCTETS": "999",
					"Queues": map[string]any{
						"Ethernet0:3": map[string]any{"SAI_QUEUE_STAT_DROPPED_PACKETS": "0", "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS": "812", "SAI_QUEUE_STAT_PACKETS": "90000"},
						"Ethernet0:0": map[string]any{"SAI_QUEUE_STAT_DROPPED_PACKETS": "5"},
					},
					"Pfcwd": map[string]any{"Ethernet0:3": map[string]any{"PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED": "0"}},
				})
			},
			want: Sample{"leaf1/Ethernet0": {"p3.pfc_tx": 40, "p3.pfc_rx": 2, "p0.pfc_tx": 0, "q3.drops": 0, "q3.ecn_marked": 812, "q3.tx_packets": 90000, "q0.drops": 5, "q3.watchdog": 0}},
		},
		{
			name: "srlinux qos", platform: intent.PlatformSRLinux, port: "ethernet-1/1",
			put: func(tw *twin.Twin) error {
				if err := tw.Put(mustPath("/qos/interfaces/interface[interface-id=ethernet-1/1]/output/queues"), map[string]any{
					"queue": []any{
						map[string]any{"queue-name": "unicast-3", "queue-statistics": map[string]any{"aggregate-statistics": map[string]any{
							"dropped-packets": 0, "egq-dropped-packets": 1, "ecn-marked-packets": 345, "transmitted-packets": 100000,
							"in-profile": map[string]any{"dropped-packets": 7},
						}}},
						map[string]any{"queue-name": "unicast-0", "queue-statistics": map[string]any{"aggregate-statistics": map[string]any{"dropped-packets": 9}}},
					}}); err != nil {
					return err
				}
				return tw.Put(mustPath("/qos/interfaces/interface[interface-id=ethernet-1/1]/pfc/statistics"), map[string]any{
					"total-pfc-pause-frames-generated": 12,
					"pfc-priority":                     []any{map[string]any{"index": 3, "pfc-pause-frames-generated": 12, "pfc-pause-frames-received": 0, "deadlock-recovery-occurrences": 0}},
				})
			},
			want: Sample{"leaf1/ethernet-1/1": {"q3.drops": 1, "q3.ecn_marked": 345, "q3.tx_packets": 100000, "q0.drops": 9, "p3.pfc_tx": 12, "p3.pfc_rx": 0, "q3.watchdog": 0}},
		},
		{
			// Platforms with the qos-queue-profile-stats feature have no
			// aggregate dropped-packets leaf: the drops are per profile.
			// total-packet-pfc-discards is lossless traffic dropped at
			// ingress when the PFC buffer ran out.
			name: "srlinux per-profile queue stats and PFC buffer discards", platform: intent.PlatformSRLinux, port: "ethernet-1/2",
			put: func(tw *twin.Twin) error {
				if err := tw.Put(mustPath("/qos/interfaces/interface[interface-id=ethernet-1/2]/output/queues"), map[string]any{
					"queue": []any{
						map[string]any{"queue-name": "unicast-3", "queue-statistics": map[string]any{"aggregate-statistics": map[string]any{
							"in-profile":  map[string]any{"dropped-packets": 2, "transmitted-packets": 500},
							"out-profile": map[string]any{"dropped-packets": 1},
						}}},
					}}); err != nil {
					return err
				}
				return tw.Put(mustPath("/qos/interfaces/interface[interface-id=ethernet-1/2]/pfc/statistics"), map[string]any{
					"total-pfc-pause-frames-generated": 12, "total-packet-pfc-discards": 6,
					"pfc-priority": []any{map[string]any{"index": 3, "pfc-pause-frames-generated": 12}},
				})
			},
			want: Sample{"leaf1/ethernet-1/2": {"q3.drops": 3, "p3.pfc_tx": 12, "pfc_discards": 6}},
		},
		{
			name: "openconfig queues (no PFC counters in the model)", platform: intent.PlatformOpenConfig, port: "Ethernet1",
			put: func(tw *twin.Twin) error {
				return tw.Put(mustPath("/qos/interfaces/interface[interface-id=Ethernet1]/output/queues"), map[string]any{
					"queue": []any{
						map[string]any{"name": "3", "state": map[string]any{"name": "3", "dropped-pkts": 4, "transmit-pkts": 1000}},
						map[string]any{"name": "0", "state": map[string]any{"name": "0", "dropped-pkts": 1}},
					}})
			},
			want: Sample{"leaf1/Ethernet1": {"q3.drops": 4, "q3.tx_packets": 1000, "q0.drops": 1}},
		},
		{
			name: "eos queues with arista-qos-augments ecn-marked-pkts", platform: intent.PlatformEOS, port: "Ethernet1/1",
			put: func(tw *twin.Twin) error {
				return tw.Put(mustPath("/qos/interfaces/interface[interface-id=Ethernet1/1]/output/queues"), map[string]any{
					"queue": []any{
						map[string]any{"name": "3", "state": map[string]any{"name": "3", "dropped-pkts": 0, "wred-dropped-pkts": 0, "ecn-marked-pkts": 12}},
					}})
			},
			want: Sample{"leaf1/Ethernet1/1": {"q3.drops": 0, "q3.ecn_marked": 12}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tw, err := twin.Start(twin.Options{Name: "leaf1", Platform: tt.platform})
			if err != nil {
				t.Fatal(err)
			}
			defer tw.Close()
			if err := tt.put(tw); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := transport.Dial(ctx, intent.Switch{Name: "leaf1", Platform: tt.platform, Address: tw.Addr(), TLS: intent.TLS{Insecure: true}},
				transport.Options{Attempts: 1, Timeout: 5 * time.Second, Getenv: func(string) string { return "" }})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			src := &SwitchCounters{Switch: "leaf1", Platform: tt.platform, Ports: []string{tt.port}, Sub: c}
			got, err := src.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Read mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSwitchCredentialsNotInReport reads counters from a twin that demands
// credentials, once with the right and once with a wrong password, runs the
// verdict and renders every report format: no password may appear.
func TestSwitchCredentialsNotInReport(t *testing.T) {
	const good, bad = "s3cret-Pw-4711", "wr0ng-Pw-0815"
	tw, err := twin.Start(twin.Options{Name: "leaf1", Platform: intent.PlatformSRLinux, Username: "admin", Password: good})
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	for _, pw := range []string{good, bad} {
		env := map[string]string{"GNMI_USER": "admin", "GNMI_PASS": pw}
		sw := intent.Switch{Name: "leaf1", Platform: intent.PlatformSRLinux, Address: tw.Addr(), TLS: intent.TLS{Insecure: true},
			Credentials: intent.Credentials{UsernameEnv: "GNMI_USER", PasswordEnv: "GNMI_PASS"}}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := transport.Dial(ctx, sw, transport.Options{Attempts: 1, Timeout: 5 * time.Second, PlaintextCredentials: true, Getenv: func(k string) string { return env[k] }})
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		src := &SwitchCounters{Switch: "leaf1", Platform: intent.PlatformSRLinux, Ports: []string{"ethernet-1/1"}, Sub: c}
		rep, err := Run(ctx, fabric(2), Options{Engine: &fakeEngine{}, Sources: []Source{src}, AllPairs: true})
		c.Close()
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if pw == bad && rep.Verdict() != "ERROR" {
			t.Errorf("wrong password: verdict %s, want ERROR (counters unreadable)", rep.Verdict())
		}
		var all bytes.Buffer
		for _, w := range []func(io.Writer, *Report) error{WriteText, WriteJSON, WriteJUnit, WriteMarkdown} {
			if err := w(&all, rep); err != nil {
				t.Fatal(err)
			}
		}
		for _, secret := range []string{good, bad} {
			if bytes.Contains(all.Bytes(), []byte(secret)) {
				t.Errorf("a report contains the password %q:\n%s", secret, all.String())
			}
		}
	}
}
