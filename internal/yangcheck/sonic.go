package yangcheck

import (
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/openconfig/goyang/pkg/yang"
)

// sonic validates a CONFIG_DB write (origin sonic-db) at
// /CONFIG_DB/<namespace>[/<TABLE>[/<KEY>[/<field>]]].
func (c *checker) sonic(p *gnmipb.Path, v any) {
	c.strs = true
	elems := p.GetElem()
	path := OriginSONiCDB + ":"
	for i, e := range elems {
		if i > 4 {
			break
		}
		path += "/" + e.GetName()
	}
	if len(elems) < 2 || elems[0].GetName() != "CONFIG_DB" {
		c.addf(path, "sonic-db paths must start /CONFIG_DB/<namespace> (e.g. /CONFIG_DB/localhost); only CONFIG_DB is YANG-modelled")
		return
	}
	base := OriginSONiCDB + ":/CONFIG_DB/" + elems[1].GetName()
	switch len(elems) {
	case 2:
		obj, ok := v.(map[string]any)
		if !ok {
			c.addf(base, "value must be a JSON object of tables, got %s", jsonKind(v))
			return
		}
		for _, t := range sortedKeys(obj) {
			c.sonicTable(t, obj[t], base+"/"+t)
		}
	case 3:
		c.sonicTable(elems[2].GetName(), v, base+"/"+elems[2].GetName())
	case 4, 5:
		t := elems[2].GetName()
		te := c.s.tables[t]
		tpath := base + "/" + t
		if te == nil {
			c.addf(tpath, "unknown CONFIG_DB table %q", t)
			return
		}
		if len(elems) == 5 {
			f := elems[4].GetName()
			v = map[string]any{f: v}
		}
		c.sonicKey(te, elems[3].GetName(), v, tpath+"/"+elems[3].GetName())
	default:
		c.addf(path, "sonic-db path is too deep: /CONFIG_DB/<ns>/<TABLE>/<KEY>/<field> at most")
	}
}

func (c *checker) sonicTable(t string, v any, path string) {
	te := c.s.tables[t]
	if te == nil {
		c.addf(path, "unknown CONFIG_DB table %q", t)
		return
	}
	obj, ok := v.(map[string]any)
	if !ok {
		c.addf(path, "table value must be a JSON object of keys, got %s", jsonKind(v))
		return
	}
	for _, k := range sortedKeys(obj) {
		c.sonicKey(te, k, obj[k], path+"/"+k)
	}
}

// sonicKey validates the hash of one CONFIG_DB key of table te. The key is
// matched the way sonic-yang-mgmt does: a child container of that name, or
// a list whose number of keys equals the number of "|"-separated parts and
// whose key leaves accept them.
func (c *checker) sonicKey(te *yang.Entry, key string, v any, path string) {
	fields, ok := v.(map[string]any)
	if !ok {
		c.addf(path, "key value must be a JSON object of fields, got %s", jsonKind(v))
		return
	}
	if ch := te.Dir[key]; ch != nil && ch.IsContainer() {
		c.sonicFields(ch, nil, fields, path)
		return
	}
	parts := strings.Split(key, "|")
	var first Violations
	tried := false
	for _, l := range sortedDir(te) {
		if !l.IsList() || len(strings.Fields(l.Key)) != len(parts) {
			continue
		}
		sub := &checker{s: c.s, strs: true}
		keys := strings.Fields(l.Key)
		for i, k := range keys {
			if ke := l.Dir[k]; ke != nil {
				if msg := sub.value(ke, ke.Type, parts[i], true); msg != "" {
					sub.addf(path, "key part %d (%s=%q): %s", i+1, k, parts[i], msg)
				}
			}
		}
		sub.sonicFields(l, keys, fields, path)
		if len(sub.out) == 0 {
			return
		}
		if !tried {
			first, tried = sub.out, true
		}
	}
	if !tried {
		c.addf(path, "table %s has no list with a %d-part key", te.Name, len(parts))
		return
	}
	c.out = append(c.out, first...)
}

// sonicFields validates the fields of one CONFIG_DB hash against the list
// entry or container e (keys are e's key leaves, which are not fields).
func (c *checker) sonicFields(e *yang.Entry, keys []string, fields map[string]any, path string) {
	var inner *yang.Entry // map tables: {"26": "3"} -> inner list (key, value)
	for _, ch := range sortedDir(e) {
		if ch.IsList() && len(strings.Fields(ch.Key)) == 1 && len(ch.Dir) == 2 {
			inner = ch
		}
	}
	for _, f := range sortedKeys(fields) {
		fpath := path + "/" + f
		val := fields[f]
		name := strings.TrimSuffix(f, "@")
		ch := e.Dir[name]
		if ch != nil && contains(keys, name) {
			c.addf(fpath, "%q is a key of %s, not a field", name, e.Name)
			continue
		}
		switch {
		case ch != nil && ch.IsLeaf():
			s, ok := val.(string)
			if !ok {
				c.addf(fpath, "CONFIG_DB field values are strings, got %s", jsonKind(val))
				continue
			}
			if ch.ReadOnly() {
				c.addf(fpath, "config false (state) node cannot be set")
				continue
			}
			if msg := c.value(ch, ch.Type, s, true); msg != "" {
				c.addf(fpath, "%s", msg)
			}
		case ch != nil && ch.IsLeafList():
			var items []any
			switch x := val.(type) {
			case string:
				for _, it := range strings.Split(x, ",") {
					items = append(items, it)
				}
			case []any:
				items = x
			default:
				c.addf(fpath, "leaf-list field must be a string or an array of strings, got %s", jsonKind(val))
				continue
			}
			for _, it := range items {
				if msg := c.value(ch, ch.Type, it, true); msg != "" {
					c.addf(fpath, "%s", msg)
				}
			}
		case ch == nil && inner != nil:
			kname := strings.Fields(inner.Key)[0]
			var vleaf *yang.Entry
			for n, l := range inner.Dir {
				if n != kname {
					vleaf = l
				}
			}
			if ke := inner.Dir[kname]; ke != nil {
				if msg := c.value(ke, ke.Type, f, true); msg != "" {
					c.addf(fpath, "%s %s", kname, msg)
				}
			}
			s, ok := val.(string)
			if !ok {
				c.addf(fpath, "CONFIG_DB field values are strings, got %s", jsonKind(val))
				continue
			}
			if vleaf != nil {
				if msg := c.value(vleaf, vleaf.Type, s, true); msg != "" {
					c.addf(fpath, "%s %s", vleaf.Name, msg)
				}
			}
		default:
			c.addf(fpath, "unknown field %q of %s", f, e.Name)
		}
	}
}
