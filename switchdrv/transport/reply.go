package transport

import (
	"bytes"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// getReply receives the GetResponse to a PreparedGet (GetPrepared).
// With values asked (GetPreparedJSON), a reply of one JSON value per
// asked path is read into vals instead of notes.
type getReply struct {
	g      *PreparedGet
	notes  []*gnmipb.Notification
	values bool
	vals   [][]byte
}

// decode reads b, the GetResponse's wire bytes, which it keeps: the JSON
// values are slices of b. A reply in the usual shape (notifications of
// updates, each with a path and a JSON value) is read by readReply, which
// takes an update's path to be the asked path whose bytes it repeats,
// instead of decoding it (each path element's keys are a map, and making
// those maps was most of decoding a reply). Anything else is decoded by
// proto.Unmarshal: the result is the same (FuzzReadReply holds the two
// equal), errors included.
func (r *getReply) decode(b []byte) error {
	if r.values {
		if vals, ok := readValues(b, &replyReader{g: r.g}); ok {
			r.vals = vals
			return nil
		}
	}
	if notes, ok := readReply(b, &replyReader{g: r.g}); ok {
		r.notes = notes
		return nil
	}
	resp := &gnmipb.GetResponse{}
	if err := proto.Unmarshal(b, resp); err != nil {
		return err
	}
	r.notes = resp.GetNotification()
	return nil
}

// readReply reads a GetResponse made only of notifications, each of an
// optional timestamp and prefix and of updates, each update of a path and
// a value (val), every field present at most once (repeated ones aside)
// and with its wire type. The updates' paths that repeat an asked path's
// bytes are that *gnmipb.Path of g.paths (shared: read only). ok is false
// for anything else, and for any malformed input.
func readReply(b []byte, r *replyReader) (notes []*gnmipb.Notification, ok bool) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num != replyNote || typ != protowire.BytesType {
			return nil, false
		}
		v, m := protowire.ConsumeBytes(b[n:])
		if m < 0 {
			return nil, false
		}
		b = b[n+m:]
		note, ok := readNotification(v, r)
		if !ok {
			return nil, false
		}
		notes = append(notes, note)
	}
	return notes, true
}

// The field numbers readReply reads, from gnmi.proto's descriptors.
var (
	noteTimestamp = fieldNumber(&gnmipb.Notification{}, "timestamp")
	notePrefix    = fieldNumber(&gnmipb.Notification{}, "prefix")
	noteUpdate    = fieldNumber(&gnmipb.Notification{}, "update")
	updatePath    = fieldNumber(&gnmipb.Update{}, "path")
	updateVal     = fieldNumber(&gnmipb.Update{}, "val")
	valJSON       = fieldNumber(&gnmipb.TypedValue{}, "json_val")
	valJSONIETF   = fieldNumber(&gnmipb.TypedValue{}, "json_ietf_val")
	replyNote     = fieldNumber(&gnmipb.GetResponse{}, "notification")
	requestPath   = fieldNumber(&gnmipb.GetRequest{}, "path")
)

func fieldNumber(m proto.Message, name protoreflect.Name) protowire.Number {
	return m.ProtoReflect().Descriptor().Fields().ByName(name).Number()
}

// replyReader finds the asked paths in a reply.
type replyReader struct {
	g     *PreparedGet
	next  int            // the asked path the next update likely answers
	index map[string]int // the asked paths by their bytes, once needed
}

func readNotification(b []byte, r *replyReader) (*gnmipb.Notification, bool) {
	note := &gnmipb.Notification{}
	var seenTime, seenPrefix bool
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, false
		}
		b = b[n:]
		switch {
		case num == noteTimestamp && typ == protowire.VarintType && !seenTime:
			t, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return nil, false
			}
			note.Timestamp, seenTime, b = int64(t), true, b[m:]
		case num == notePrefix && typ == protowire.BytesType && !seenPrefix:
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return nil, false
			}
			note.Prefix, seenPrefix, b = &gnmipb.Path{}, true, b[m:]
			if proto.Unmarshal(v, note.Prefix) != nil {
				return nil, false
			}
		case num == noteUpdate && typ == protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return nil, false
			}
			b = b[m:]
			u, ok := readUpdate(v, r)
			if !ok {
				return nil, false
			}
			note.Update = append(note.Update, u)
		default:
			return nil, false
		}
	}
	return note, true
}

func readUpdate(b []byte, r *replyReader) (*gnmipb.Update, bool) {
	u := &gnmipb.Update{}
	var seenPath, seenVal bool
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || typ != protowire.BytesType {
			return nil, false
		}
		v, m := protowire.ConsumeBytes(b[n:])
		if m < 0 {
			return nil, false
		}
		b = b[n+m:]
		switch {
		case num == updatePath && !seenPath:
			seenPath = true
			if u.Path = r.asked(v); u.Path == nil {
				u.Path = &gnmipb.Path{}
				if proto.Unmarshal(v, u.Path) != nil {
					return nil, false
				}
			}
		case num == updateVal && !seenVal:
			seenVal = true
			if u.Val = jsonValue(v); u.Val == nil {
				u.Val = &gnmipb.TypedValue{}
				if proto.Unmarshal(v, u.Val) != nil {
					return nil, false
				}
			}
		default:
			return nil, false
		}
	}
	return u, true
}

// jsonValue is the TypedValue b holds when it is only a JSON or JSON_IETF
// value, its text a slice of b (capped: appending to it copies); nil
// otherwise.
func jsonValue(b []byte) *gnmipb.TypedValue {
	v, ietf := jsonBytes(b)
	switch {
	case v == nil:
		return nil
	case ietf:
		return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: v}}
	}
	return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonVal{JsonVal: v}}
}

// jsonBytes is the text of the JSON (ietf false) or JSON_IETF value the
// TypedValue b holds when that is all it holds, a capped slice of b (not
// nil, even when empty); nil otherwise.
func jsonBytes(b []byte) (v []byte, ietf bool) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 || typ != protowire.BytesType || (num != valJSON && num != valJSONIETF) {
		return nil, false
	}
	v, m := protowire.ConsumeBytes(b[n:])
	if m < 0 || n+m != len(b) {
		return nil, false
	}
	return v[:len(v):len(v)], num == valJSONIETF
}

// aheadPaths is how many asked paths after the expected one asked and
// observeAs look at before they index all of them: a path the target does
// not have gets no update, so the next update answers a later path.
const aheadPaths = 16

// asked is the asked path whose wire bytes are b, nil when none is.
func (r *replyReader) asked(b []byte) *gnmipb.Path {
	if i := r.askedIndex(b); i >= 0 {
		return r.g.paths[i]
	}
	return nil
}

// askedIndex is the index of the asked path whose wire bytes are b, -1
// when none is. A target answers the paths in the order asked as a rule,
// leaving out the paths it does not have: the one after the last found is
// tried first, then the few after it (aheadPaths), then an index of all
// (a path asked twice is found at its first place there).
func (r *replyReader) askedIndex(b []byte) int {
	g := r.g
	for i := r.next; i < len(g.wire) && i <= r.next+aheadPaths; i++ {
		if bytes.Equal(g.wire[i], b) {
			r.next = i + 1
			return i
		}
	}
	if r.index == nil {
		r.index = make(map[string]int, len(g.wire))
		for i, w := range g.wire {
			if _, dup := r.index[string(w)]; !dup {
				r.index[string(w)] = i
			}
		}
	}
	i, ok := r.index[string(b)]
	if !ok {
		return -1
	}
	r.next = i + 1
	return i
}

// readValues reads a GetResponse whose every update answers an asked path
// (its path the asked path's bytes) with a JSON or JSON_IETF value and no
// other field, each asked path at most once, in notifications of nothing
// else than a timestamp and updates: vals[i] is the JSON text of asked
// path i (a capped slice of b), nil when the reply has none. ok is false
// for any other reply (a prefix, a path not asked or answered twice,
// another encoding, a delete, a field readReply does not read) and for
// malformed input: readReply or proto.Unmarshal reads those.
func readValues(b []byte, r *replyReader) (vals [][]byte, ok bool) {
	vals = make([][]byte, len(r.g.paths))
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num != replyNote || typ != protowire.BytesType {
			return nil, false
		}
		note, m := protowire.ConsumeBytes(b[n:])
		if m < 0 {
			return nil, false
		}
		b = b[n+m:]
		seenTime := false
		for len(note) > 0 {
			num, typ, n := protowire.ConsumeTag(note)
			if n < 0 {
				return nil, false
			}
			note = note[n:]
			switch {
			case num == noteTimestamp && typ == protowire.VarintType && !seenTime:
				_, m := protowire.ConsumeVarint(note)
				if m < 0 {
					return nil, false
				}
				seenTime, note = true, note[m:]
			case num == noteUpdate && typ == protowire.BytesType:
				u, m := protowire.ConsumeBytes(note)
				if m < 0 {
					return nil, false
				}
				note = note[m:]
				i, v, ok := readValue(u, r)
				if !ok || vals[i] != nil {
					return nil, false
				}
				vals[i] = v
			default:
				return nil, false
			}
		}
	}
	return vals, true
}

// readValue reads an update of readValues': the index of the asked path
// it answers and its JSON text (not nil).
func readValue(b []byte, r *replyReader) (i int, v []byte, ok bool) {
	i = -1
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || typ != protowire.BytesType {
			return -1, nil, false
		}
		f, m := protowire.ConsumeBytes(b[n:])
		if m < 0 {
			return -1, nil, false
		}
		b = b[n+m:]
		switch {
		case num == updatePath && i < 0:
			if i = r.askedIndex(f); i < 0 {
				return -1, nil, false
			}
		case num == updateVal && v == nil:
			if v, _ = jsonBytes(f); v == nil {
				return -1, nil, false
			}
		default:
			return -1, nil, false
		}
	}
	return i, v, i >= 0 && v != nil
}
