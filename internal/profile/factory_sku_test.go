package profile

import (
	"testing"
)

// TestSONiCFactoryMatchesBuildimageRender: the ACS-MSN3800 factory
// CONFIG_DB of every SONiC profile holds what sonic-buildimage's own
// render gives that SKU (086b03bd70f9):
//   - PORT_QOS_MAP|global dscp_to_tc_map AZURE: qos_config.j2 emits it
//     unless the device is a backend storage device;
//   - PORT|<p> fec rs on 100G ports: minigraph.py sets it for speed 100000
//     unless FECDisabled or port_config.ini names a fec.
func TestSONiCFactoryMatchesBuildimageRender(t *testing.T) {
	for _, name := range []string{"sonic-202405", "sonic-202411", "sonic-202505", "sonic-202511"} {
		p, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		_, tree, err := p.FactoryDatastore()
		if err != nil {
			t.Fatal(err)
		}
		db := tree["CONFIG_DB"].(map[string]any)["localhost"].(map[string]any)
		pqm, _ := db["PORT_QOS_MAP"].(map[string]any)
		global, _ := pqm["global"].(map[string]any)
		if global["dscp_to_tc_map"] != "AZURE" {
			t.Errorf("%s: PORT_QOS_MAP|global = %v, want dscp_to_tc_map AZURE", name, pqm["global"])
		}
		ports, _ := db["PORT"].(map[string]any)
		if len(ports) == 0 {
			t.Fatalf("%s: no PORT table", name)
		}
		for pn, e := range ports {
			e, _ := e.(map[string]any)
			if e["speed"] == "100000" && e["fec"] != "rs" {
				t.Errorf("%s: PORT|%s speed 100000 fec %v, want rs", name, pn, e["fec"])
				break
			}
		}
	}
}
