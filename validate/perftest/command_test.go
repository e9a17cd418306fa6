package perftest

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestArgv(t *testing.T) {
	end := End{Device: "mlx5_0", Port: 1, GIDIndex: 3}
	tests := []struct {
		name   string
		spec   Spec
		port   int
		server string
		want   string
	}{
		{
			name: "bw server tclass",
			spec: Spec{Tool: "ib_write_bw", Size: 65536, Duration: 10 * time.Second, ToS: 106},
			port: 18515,
			want: "ib_write_bw -d mlx5_0 -i 1 -x 3 -F --report_gbits -p 18515 -s 65536 -D 10 --tclass 106",
		},
		{
			name:   "bw client tclass",
			spec:   Spec{Tool: "ib_write_bw", Size: 65536, Duration: 10 * time.Second, ToS: 106},
			port:   18515,
			server: "10.0.1.2",
			want:   "ib_write_bw -d mlx5_0 -i 1 -x 3 -F --report_gbits -p 18515 -s 65536 -D 10 --tclass 106 10.0.1.2",
		},
		{
			name:   "bw rdma_cm tos qps cpu",
			spec:   Spec{Tool: "ib_send_bw", Duration: 5 * time.Second, QPs: 4, ToS: 106, RDMACM: true, CPUUtil: true},
			port:   18600,
			server: "10.0.1.2",
			want:   "ib_send_bw -d mlx5_0 -i 1 -x 3 -F --report_gbits -p 18600 -D 5 -q 4 -R -T 106 --cpu_util 10.0.1.2",
		},
		{
			name:   "lat iterations",
			spec:   Spec{Tool: "ib_write_lat", Size: 2, Iterations: 10000, ToS: 106},
			port:   18516,
			server: "gpu2",
			want:   "ib_write_lat -d mlx5_0 -i 1 -x 3 -F --report_gbits -p 18516 -s 2 -n 10000 --tclass 106 gpu2",
		},
		{
			name: "no tos, rdma_cm",
			spec: Spec{Tool: "ib_read_lat", Iterations: 1000, ToS: -1, RDMACM: true},
			port: 20000,
			want: "ib_read_lat -d mlx5_0 -i 1 -x 3 -F --report_gbits -p 20000 -n 1000 -R",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.spec.Argv(end, tt.port, tt.server)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(strings.Fields(tt.want), got); diff != "" {
				t.Errorf("Argv mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestArgvErrors(t *testing.T) {
	good := Spec{Tool: "ib_write_bw", ToS: -1}
	end := End{Device: "mlx5_0", Port: 1, GIDIndex: 3}
	tests := []struct {
		name   string
		spec   Spec
		end    End
		port   int
		server string
	}{
		{"unknown tool", Spec{Tool: "rm", ToS: -1}, end, 1, ""},
		{"sub-second duration", Spec{Tool: "ib_write_bw", Duration: time.Millisecond, ToS: -1}, end, 1, ""},
		{"duration and iterations", Spec{Tool: "ib_write_lat", Duration: time.Second, Iterations: 100, ToS: -1}, end, 1, ""},
		{"too few iterations", Spec{Tool: "ib_write_lat", Iterations: 4, ToS: -1}, end, 1, ""},
		{"tos range", Spec{Tool: "ib_write_bw", ToS: 256}, end, 1, ""},
		{"cpu_util without duration", Spec{Tool: "ib_write_bw", ToS: -1, CPUUtil: true}, end, 1, ""},
		{"device injection", good, End{Device: "mlx5_0 -x", Port: 1}, 1, ""},
		{"port 0", good, End{Device: "mlx5_0"}, 1, ""},
		{"gid range", good, End{Device: "mlx5_0", Port: 1, GIDIndex: 300}, 1, ""},
		{"tcp port", good, end, 70000, ""},
		{"server flag", good, end, 1, "-h"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := tt.spec.Argv(tt.end, tt.port, tt.server); err == nil {
				t.Errorf("Argv = %q, want an error", got)
			}
		})
	}
}

// sysfsGIDs builds a sysfs GID table the way mlx5 lays it out for a netdev
// with an IPv6 link-local and one IPv4 address: each address twice, as
// RoCE v1 and RoCE v2.
func sysfsGIDs(dev, netdev string) fstest.MapFS {
	base := "sys/class/infiniband/" + dev + "/ports/1/"
	m := fstest.MapFS{}
	add := func(i, gid, typ, nd string) {
		m[base+"gids/"+i] = &fstest.MapFile{Data: []byte(gid + "\n")}
		if typ != "" {
			m[base+"gid_attrs/types/"+i] = &fstest.MapFile{Data: []byte(typ + "\n")}
			m[base+"gid_attrs/ndevs/"+i] = &fstest.MapFile{Data: []byte(nd + "\n")}
		}
	}
	add("0", "fe80:0000:0000:0000:0e42:a1ff:fe6c:2b10", "IB/RoCE v1", netdev)
	add("1", "fe80:0000:0000:0000:0e42:a1ff:fe6c:2b10", "RoCE v2", netdev)
	add("2", "0000:0000:0000:0000:0000:ffff:0a00:0101", "IB/RoCE v1", netdev)
	add("3", "0000:0000:0000:0000:0000:ffff:0a00:0101", "RoCE v2", netdev)
	add("4", "0000:0000:0000:0000:0000:0000:0000:0000", "", "") // unused slot: attrs unreadable
	add("5", "0000:0000:0000:0000:0000:ffff:c0a8:0001", "RoCE v2", "vlan100")
	return m
}

func TestGIDIndex(t *testing.T) {
	fsys := sysfsGIDs("mlx5_0", "ens1f0np0")
	tests := []struct {
		name    string
		netdev  string
		addr    string
		want    int
		wantErr bool
	}{
		{name: "first RoCE v2 IPv4", netdev: "ens1f0np0", want: 3},
		{name: "matching address", netdev: "ens1f0np0", addr: "10.0.1.1", want: 3},
		{name: "other netdev", netdev: "vlan100", want: 5},
		{name: "address not on netdev", netdev: "ens1f0np0", addr: "192.168.0.1", wantErr: true},
		{name: "unknown netdev", netdev: "eth9", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var addr netip.Addr
			if tt.addr != "" {
				addr = netip.MustParseAddr(tt.addr)
			}
			got, err := GIDIndex(fsys, "mlx5_0", 1, tt.netdev, addr)
			if tt.wantErr {
				if !errors.Is(err, ErrNoGID) {
					t.Fatalf("GIDIndex = %+v, %v; want ErrNoGID", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Index != tt.want {
				t.Errorf("GIDIndex = %d, want %d", got.Index, tt.want)
			}
		})
	}
	if _, err := GIDIndex(fsys, "mlx5_9", 1, "x", netip.Addr{}); err == nil {
		t.Error("GIDIndex on a missing device: want an error")
	}
}

// TestGrepFS: the sysfs tree read directly and the same tree
// read through grep output give the same answer.
func TestGrepFS(t *testing.T) {
	out := []byte("/sys/class/infiniband/mlx5_1/ports/1/gids/0:fe80:0000:0000:0000:0e42:a1ff:fe6c:2b11\n" +
		"/sys/class/infiniband/mlx5_1/ports/1/gids/1:0000:0000:0000:0000:0000:ffff:0a00:0102\n" +
		"/sys/class/infiniband/mlx5_1/ports/1/gid_attrs/types/0:RoCE v2\n" +
		"/sys/class/infiniband/mlx5_1/ports/1/gid_attrs/types/1:RoCE v2\n" +
		"/sys/class/infiniband/mlx5_1/ports/1/gid_attrs/ndevs/0:ens1f1np1\n" +
		"/sys/class/infiniband/mlx5_1/ports/1/gid_attrs/ndevs/1:ens1f1np1\n")
	got, err := GIDIndex(GrepFS(out, ""), "mlx5_1", 1, "ens1f1np1", netip.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Index != 1 || got.GID.Unmap() != netip.MustParseAddr("10.0.1.2") {
		t.Errorf("GIDIndex via grep = %+v, want index 1 for 10.0.1.2", got)
	}
}
