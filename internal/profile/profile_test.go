package profile

import (
	"fmt"
	"strings"
	"testing"
)

func TestEveryProfileLoads(t *testing.T) {
	ps := All()
	want := []string{"eos", "openconfig", "sonic-202405", "sonic-202411", "sonic-202505", "sonic-202511", "srlinux-24.10", "srlinux-25.3"}
	if got := Names(""); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("profiles = %v, want %v", got, want)
	}
	for _, p := range ps {
		if _, _, err := p.FactoryDatastore(); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
	}
}

// The default is the newest profile, except SONiC's: sonic-202411 is
// marked default, since what its config updater allows every later branch
// allows too (TestDefaultPayloadAcceptedByLaterReleases).
func TestDefaultIsNewestOrMarked(t *testing.T) {
	for plat, want := range map[string]string{"srlinux": "srlinux-25.3", "sonic": "sonic-202411", "eos": "eos", "openconfig": "openconfig"} {
		p, err := Default(plat)
		if err != nil || p.Name != want {
			t.Errorf("Default(%s) = %v, %v; want %s", plat, p, err, want)
		}
	}
	if _, err := Default("junos"); err == nil {
		t.Error("Default(junos): no error")
	}
}

func TestLookupErrorsListKnown(t *testing.T) {
	_, err := Lookup("srlinux-23.10")
	if err == nil || !strings.Contains(err.Error(), "srlinux-25.3") {
		t.Fatalf("Lookup(srlinux-23.10) = %v, want the known names", err)
	}
	_, err = LookupFor("sonic", "srlinux-25.3")
	if err == nil || !strings.Contains(err.Error(), "sonic-202405, sonic-202411") {
		t.Fatalf("LookupFor(sonic, srlinux-25.3) = %v", err)
	}
	if _, err := LookupASIC("tomahawk9"); err == nil || !strings.Contains(err.Error(), "spectrum2") {
		t.Fatalf("LookupASIC = %v", err)
	}
}

// The SR Linux feature set of a 7220 IXR-H4 (issue 9): the Jericho2 and
// development-stream features are off, XGS PFC is on.
func TestSRLinuxFeatureSet(t *testing.T) {
	p, _ := Lookup("srlinux-25.3")
	for f, want := range map[string]bool{
		"future-0-0": false, "qos-ecn-dscp-policy": false, "qos-pfc-dnx": false, "ixr-dnx": false,
		"srl-feat:qos-pfc-xgs": true, "qos-pfc": true, "tomahawk4": true, "bgp": true,
	} {
		if got := p.FeatureOn(f); got != want {
			t.Errorf("FeatureOn(%s) = %v, want %v", f, got, want)
		}
	}
}

// The SONiC factory CONFIG_DB is what the templates render for ACS-MSN3800:
// BUFFER_PG |0 and |3-4, CABLE_LENGTH|AZURE for every port, no PFC_WD.
func TestSONiCFactory(t *testing.T) {
	p, _ := Lookup("sonic-202411")
	origin, tree, err := p.FactoryDatastore()
	if err != nil || origin != "sonic-db" {
		t.Fatal(origin, err)
	}
	db := tree["CONFIG_DB"].(map[string]any)["localhost"].(map[string]any)
	ports := p.SONiCPorts()
	if len(ports) != 64 || ports[63] != "Ethernet252" {
		t.Fatalf("ports = %d, last %s", len(ports), ports[len(ports)-1])
	}
	cable := db["CABLE_LENGTH"].(map[string]any)["AZURE"].(map[string]any)
	for _, pn := range ports {
		for _, k := range []string{pn + "|0", pn + "|3-4"} {
			if _, ok := db["BUFFER_PG"].(map[string]any)[k]; !ok {
				t.Errorf("no BUFFER_PG|%s", k)
			}
		}
		if cable[pn] != "5m" {
			t.Errorf("CABLE_LENGTH|AZURE %s = %v", pn, cable[pn])
		}
		if _, ok := db["PORT_QOS_MAP"].(map[string]any)[pn]; !ok {
			t.Errorf("no PORT_QOS_MAP|%s", pn)
		}
	}
	if _, ok := db["PFC_WD"]; ok {
		t.Error("PFC_WD exists although the watchdog is not enabled at boot")
	}
	prof := db["BUFFER_PROFILE"].(map[string]any)["pg_lossless_100000_5m_profile"].(map[string]any)
	if prof["size"] != "75776" {
		t.Errorf("lossless profile size = %v (Mellanox: xon+xoff)", prof["size"])
	}
	// a second call is a fresh copy
	_, t2, _ := p.FactoryDatastore()
	delete(t2["CONFIG_DB"].(map[string]any)["localhost"].(map[string]any), "PORT")
	if _, ok := db["PORT"]; !ok {
		t.Error("FactoryDatastore shares its tree between calls")
	}
}

func TestSRLinuxFactoryHasNoNamedQueues(t *testing.T) {
	p, _ := Lookup("srlinux-25.3")
	_, tree, err := p.FactoryDatastore()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tree["srl_nokia-qos:qos"]; ok {
		t.Error("a fresh SR Linux 24.3+ install has no named queues or forwarding classes")
	}
}

func TestTelemetryAndASIC(t *testing.T) {
	p, _ := Lookup("sonic-202411")
	if !p.Write.NativeWriteEnabled() || p.Telemetry().Write.NativeWriteEnabled() {
		t.Error("telemetry container option")
	}
	if !p.Write.NativeWriteEnabled() {
		t.Error("Telemetry changed the original")
	}
	q, err := p.WithASIC("spectrum4")
	if err != nil || q.ASIC != "spectrum4" || q.BufferCellBytes != 192 || p.ASIC != "spectrum2" {
		t.Errorf("WithASIC: %+v %v", q.ASIC, err)
	}
	if a := p.ASICInfo(); a == nil || a.BufferProfileSize != SizeXonXoff {
		t.Errorf("ASICInfo = %+v", a)
	}
}

// TestSKUMatchesFactory: a SONiC profile's SKU facts (what check holds port
// speeds to, FC131) are those of its factory data (what the twins boot
// with): the port count, the port speed, and the lossless buffer profile
// every port shares (FC132).
func TestSKUMatchesFactory(t *testing.T) {
	for _, p := range All() {
		if p.Platform != "sonic" {
			continue
		}
		l, ok := p.SONiCLosslessProfile()
		if !ok {
			t.Fatalf("%s: no lossless buffer profile in its factory data", p.Name)
		}
		_, db, err := p.FactoryDatastore()
		if err != nil {
			t.Fatal(err)
		}
		cfg, _ := db["CONFIG_DB"].(map[string]any)["localhost"].(map[string]any)
		ports, _ := cfg["PORT"].(map[string]any)
		if p.SKU.Name != l.SKU || p.SKU.Ports != len(l.Ports) || len(ports) != len(l.Ports) {
			t.Errorf("%s: SKU %+v, factory %s with %d ports (%d in PORT)", p.Name, p.SKU, l.SKU, len(l.Ports), len(ports))
		}
		for name, v := range ports {
			if sp := v.(map[string]any)["speed"]; fmt.Sprint(sp) != fmt.Sprint(p.SKU.MaxSpeedGbps*1000) {
				t.Errorf("%s: PORT|%s speed %v, SKU max %d G", p.Name, name, sp, p.SKU.MaxSpeedGbps)
			}
		}
		if l.Profile != "pg_lossless_100000_5m_profile" || l.Xoff != 56320 {
			t.Errorf("%s: lossless profile %s xoff %d, want pg_lossless_100000_5m_profile xoff 56320 (ACS-MSN3800 pg_profile_lookup.ini, 100000 5m)", p.Name, l.Profile, l.Xoff)
		}
	}
}
