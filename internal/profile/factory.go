package profile

import (
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// FactoryDatastore returns the datastore of a fresh install of p: the origin
// it lives under and its JSON tree (RFC 7951 member names for YANG models;
// for SONiC {"CONFIG_DB": {"localhost": {TABLE: {KEY: {field: value}}}}}).
// The tree is a new copy on every call. A profile of kind "empty" returns an
// empty tree.
func (p *Profile) FactoryDatastore() (origin string, tree map[string]any, err error) {
	f := p.Factory
	switch f.Kind {
	case "", "empty":
		return f.Origin, map[string]any{}, nil
	case "tree":
		tree := map[string]any{}
		if err := readFactory(f.File, &tree); err != nil {
			return "", nil, err
		}
		return f.Origin, tree, nil
	case "sonic-sku":
		db, err := p.sonicFactory()
		if err != nil {
			return "", nil, err
		}
		return f.Origin, map[string]any{"CONFIG_DB": map[string]any{"localhost": db}}, nil
	}
	return "", nil, fmt.Errorf("profile %s: factory kind %q", p.Name, f.Kind)
}

func readFactory(file string, v any) error {
	b, err := dataFS.ReadFile(path.Join("data/factory", file))
	if err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("data/factory/%s: %w", file, err)
	}
	return nil
}

// sonicSKU is a SONiC SKU's template output: the tables that do not depend
// on the port, the per-port ones with "{port}" in their keys, and the port
// list (port_config.ini / hwsku.json).
type sonicSKU struct {
	SKU      string `json:"sku"`
	Platform string `json:"platform"`
	Topology string `json:"topology"`
	Ports    struct {
		Prefix      string `json:"prefix"`
		Count       int    `json:"count"`
		Step        int    `json:"step"`
		Lanes       int    `json:"lanes"`
		AliasPrefix string `json:"aliasPrefix"`
		Speed       string `json:"speed"`
		MTU         string `json:"mtu"`
		AdminStatus string `json:"adminStatus"`
		FEC         string `json:"fec"`
	} `json:"ports"`
	CableLength       string                               `json:"cableLength"`
	LosslessPGProfile string                               `json:"losslessPGProfile"`
	Tables            map[string]map[string]map[string]any `json:"tables"`
	PerPort           map[string]map[string]map[string]any `json:"perPort"`
}

// SONiCPorts returns the front-panel port names of a SONiC profile's SKU in
// port order (nil for other profiles).
func (p *Profile) SONiCPorts() []string {
	if p.Factory.Kind != "sonic-sku" {
		return nil
	}
	var sku sonicSKU
	if err := readFactory(p.Factory.File, &sku); err != nil {
		return nil
	}
	return sku.portNames()
}

func (s *sonicSKU) portNames() []string {
	out := make([]string, s.Ports.Count)
	for i := range out {
		out[i] = s.Ports.Prefix + strconv.Itoa(i*s.Ports.Step)
	}
	return out
}

func (p *Profile) sonicFactory() (map[string]any, error) {
	var sku sonicSKU
	if err := readFactory(p.Factory.File, &sku); err != nil {
		return nil, err
	}
	db := map[string]any{}
	table := func(name string) map[string]any {
		t, _ := db[name].(map[string]any)
		if t == nil {
			t = map[string]any{}
			db[name] = t
		}
		return t
	}
	for tn, t := range sku.Tables {
		out := table(tn)
		for k, fields := range t {
			out[k] = cloneFields(fields)
		}
	}
	ports := sku.portNames()
	portTable := table("PORT")
	cable := map[string]any{}
	for i, pn := range ports {
		lanes := make([]string, sku.Ports.Lanes)
		for l := range lanes {
			lanes[l] = strconv.Itoa(i*sku.Ports.Lanes + l)
		}
		entry := map[string]any{
			"lanes": strings.Join(lanes, ","), "alias": sku.Ports.AliasPrefix + strconv.Itoa(i+1),
			"index": strconv.Itoa(i + 1), "speed": sku.Ports.Speed, "mtu": sku.Ports.MTU,
			"admin_status": sku.Ports.AdminStatus,
		}
		if sku.Ports.FEC != "" {
			entry["fec"] = sku.Ports.FEC
		}
		portTable[pn] = entry
		cable[pn] = sku.CableLength
		for tn, t := range sku.PerPort {
			out := table(tn)
			for k, fields := range t {
				out[strings.ReplaceAll(k, "{port}", pn)] = cloneFields(fields)
			}
		}
	}
	table("CABLE_LENGTH")["AZURE"] = cable
	return db, nil
}

func cloneFields(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// SONiCLossless is the lossless buffer profile a SONiC SKU's ports share
// after boot: buffermgrd gives every port's lossless priority groups the
// pg_profile_lookup.ini entry of the SKU's port speed and default cable.
type SONiCLossless struct {
	SKU     string   // HWSKU, e.g. ACS-MSN3800
	Profile string   // BUFFER_PROFILE name, e.g. pg_lossless_100000_5m_profile
	Xoff    int64    // its xoff, bytes
	Ports   []string // every front-panel port, in port order: they all use it
	// SpeedMbps is the speed the ports run at and the profile is for.
	SpeedMbps int64
}

// SONiCLosslessProfile returns the lossless buffer profile of a SONiC
// profile's SKU (false for other profiles, or a SKU without one).
func (p *Profile) SONiCLosslessProfile() (SONiCLossless, bool) {
	if p.Factory.Kind != "sonic-sku" {
		return SONiCLossless{}, false
	}
	var sku sonicSKU
	if err := readFactory(p.Factory.File, &sku); err != nil || sku.LosslessPGProfile == "" {
		return SONiCLossless{}, false
	}
	prof := sku.Tables["BUFFER_PROFILE"][sku.LosslessPGProfile]
	x, err := strconv.ParseInt(fmt.Sprint(prof["xoff"]), 10, 64)
	if err != nil {
		return SONiCLossless{}, false
	}
	speed, err := strconv.ParseInt(sku.Ports.Speed, 10, 64)
	if err != nil {
		return SONiCLossless{}, false
	}
	return SONiCLossless{SKU: sku.SKU, Profile: sku.LosslessPGProfile, Xoff: x, Ports: sku.portNames(), SpeedMbps: speed}, true
}
