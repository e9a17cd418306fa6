package yangcheck

import "testing"

func TestContextFree(t *testing.T) {
	for expr, want := range map[string]bool{
		"not(not(/sonic-device_metadata/DEVICE_METADATA/localhost/asic_name) and (/sonic-device_metadata/DEVICE_METADATA/localhost/switch_type='voq'))": true,
		"boolean(/qos/preserve-dscp) = false()":                           true,
		"/interface[name = 'x']/admin-state = 'enable'":                   true,
		"count(/qos/queues/queue) > 1.5":                                  true,
		"../priority = 'strict'":                                          false,
		". = 0":                                                           false,
		"/@_current_ >= /@_current_/../cir":                               false,
		"not(/@_ix_0/breakout-mode)":                                      false,
		"starts-with(name, 'ethernet')":                                   false,
		"re-match(../../name,'fc[0-7]')":                                  false,
		"matches(string(/a/b), concat('^(?:', 'x.y', ')$'))":              true,
		"config/type = 'ethernetCsmacd' or config/type = 'ieee8023adLag'": false,
		"count(*) = 0":                                                    false,
		"count(/a/*) * 2 = 4":                                             true,
	} {
		if got := contextFree(expr); got != want {
			t.Errorf("contextFree(%q) = %v, want %v", expr, got, want)
		}
	}
}
