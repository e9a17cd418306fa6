package watch_test

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv/twin"
	"github.com/fabricctl/fabricctl/validate/watch"
)

// TestSeriesOverTLS: a switch reached over TLS (a twin serving gNMI over
// real TLS on loopback, its CA in the intent) streams its counters, read
// without gRPC's own read buffer over crypto/tls's, and they grow as the
// twin's traffic does.
func TestSeriesOverTLS(t *testing.T) {
	pki, err := twin.NewPKI("watch-tls")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(pki.ServerCertPEM, pki.ServerKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	tw, err := twin.Start(twin.Options{Name: "leaf1", Platform: intent.PlatformSRLinux,
		TLS: &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tw.Close() })
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pki.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := intent.Parse("watch.yaml", []byte(testIntent))
	if err != nil {
		t.Fatal(err)
	}
	for i := range f.Switches {
		if sw := &f.Switches[i]; sw.Name == "leaf1" {
			sw.Address, sw.TLS.Insecure, sw.TLS.CA = tw.Addr(), false, ca
		}
	}
	if err := tw.Play("ethernet-1/1", 3, twin.Traffic{Drops: 2, ECNMarked: 30, PauseTx: 7}); err != nil {
		t.Fatal(err)
	}
	_, reg := start(t, watch.Options{Fabric: f, Switches: []string{"leaf1"}})
	waitFor(t, reg, "leaf1's counters over TLS", func(s map[string]float64) bool {
		return s["fabricctl_target_up{kind=switch,switch=leaf1}"] == 1 && s[drops("leaf1", "ethernet-1/1", 3)] == 2 &&
			s[pause("leaf1", "ethernet-1/1", 3, "tx")] == 7
	})
	if err := tw.Play("ethernet-1/1", 3, twin.Traffic{Drops: 3}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, reg, "the counters to grow", func(s map[string]float64) bool {
		return s[drops("leaf1", "ethernet-1/1", 3)] == 5
	})
}
