package perftest

import (
	"os"
	"testing"
)

// TestCMListening reads the JSON of `rdma -j resource show cm_id` as
// iproute2 6.1 printed it in the soft-RoCE VM (internal/rdmavm) while
// `ib_write_lat -R -p 18515` waited for its client
// (testdata/rdma/cm_id-listen.json), and with no cm_id at all ("[]").
func TestCMListening(t *testing.T) {
	listen, err := os.ReadFile("testdata/rdma/cm_id-listen.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		js      string
		port    int
		want    bool
		wantErr bool
	}{
		{name: "perftest server listening", js: string(listen), port: 18515, want: true},
		{name: "another port", js: string(listen), port: 18516},
		{name: "port is a suffix only after the colon", js: string(listen), port: 8515},
		{name: "no cm_id", js: "[]\n"},
		{name: "empty output", js: ""},
		{name: "connected, not listening", js: `[{"state":"CONNECT","src-addr":"192.168.77.2:18515"}]`, port: 18515},
		{name: "ipv6 listener", js: `[{"state":"LISTEN","src-addr":"[::]:18515"}]`, port: 18515, want: true},
		{name: "not json", js: "Failed to open NETLINK_RDMA socket", wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CMListening([]byte(tt.js), tt.port)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("CMListening = %v, %v; want %v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
