package transport

import (
	"slices"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of gnmi.proto (openconfig/gnmi v0.x, proto/gnmi/gnmi.proto).
const (
	getRequestPath     = 2 // GetRequest.path
	getRequestType     = 3 // GetRequest.type
	getRequestEncoding = 5 // GetRequest.encoding
	pathOrigin         = 2 // Path.origin
	pathElem           = 3 // Path.elem
	elemName           = 1 // PathElem.name
	elemKey            = 2 // PathElem.key (map<string, string>: entries key 1, value 2)
)

// marshalGetConfig writes GetRequest{Path: paths, Type: CONFIG, Encoding:
// enc} as proto.MarshalOptions{Deterministic: true} does (fields in
// number order, map entries sorted by key, key and value always written),
// without protobuf's reflection over every element's key map. ok is false
// for a path it does not write the same way (a deprecated element list, a
// target, unknown fields, an empty name): the caller marshals with proto
// then. TestMarshalGetConfigIsProtos holds the two byte-equal.
func marshalGetConfig(paths []*gnmipb.Path, enc gnmipb.Encoding) (b []byte, ok bool) {
	sizes := make([]int, len(paths))
	n := 0
	for i, p := range paths {
		//lint:ignore SA1019 read only to decline a path that uses the deprecated field
		if len(p.GetElement()) > 0 || p.GetTarget() != "" || len(p.ProtoReflect().GetUnknown()) > 0 {
			return nil, false
		}
		s := 0
		if o := p.GetOrigin(); o != "" {
			s += 1 + protowire.SizeBytes(len(o))
		}
		for _, e := range p.GetElem() {
			es, ok := elemSize(e)
			if !ok {
				return nil, false
			}
			s += 1 + protowire.SizeBytes(es)
		}
		sizes[i] = s
		n += 1 + protowire.SizeBytes(s)
	}
	n += 2 + 1 + protowire.SizeVarint(uint64(enc))
	b = make([]byte, 0, n)
	var keys []string
	for i, p := range paths {
		b = protowire.AppendTag(b, getRequestPath, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(sizes[i]))
		if o := p.GetOrigin(); o != "" {
			b = protowire.AppendTag(b, pathOrigin, protowire.BytesType)
			b = protowire.AppendString(b, o)
		}
		for _, e := range p.GetElem() {
			es, _ := elemSize(e)
			b = protowire.AppendTag(b, pathElem, protowire.BytesType)
			b = protowire.AppendVarint(b, uint64(es))
			b = protowire.AppendTag(b, elemName, protowire.BytesType)
			b = protowire.AppendString(b, e.GetName())
			keys = keys[:0]
			for k := range e.GetKey() {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				v := e.GetKey()[k]
				b = protowire.AppendTag(b, elemKey, protowire.BytesType)
				b = protowire.AppendVarint(b, uint64(entrySize(k, v)))
				b = protowire.AppendTag(b, 1, protowire.BytesType)
				b = protowire.AppendString(b, k)
				b = protowire.AppendTag(b, 2, protowire.BytesType)
				b = protowire.AppendString(b, v)
			}
		}
	}
	b = protowire.AppendTag(b, getRequestType, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(gnmipb.GetRequest_CONFIG))
	if enc != 0 {
		b = protowire.AppendTag(b, getRequestEncoding, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(enc))
	}
	return b, true
}

// elemSize is the marshalled size of e, ok false when it has no name or
// unknown fields.
func elemSize(e *gnmipb.PathElem) (int, bool) {
	if e.GetName() == "" || len(e.ProtoReflect().GetUnknown()) > 0 {
		return 0, false
	}
	s := 1 + protowire.SizeBytes(len(e.GetName()))
	for k, v := range e.GetKey() {
		s += 1 + protowire.SizeBytes(entrySize(k, v))
	}
	return s, true
}

// entrySize is the size of a key map entry's key and value fields.
func entrySize(k, v string) int {
	return 1 + protowire.SizeBytes(len(k)) + 1 + protowire.SizeBytes(len(v))
}
