package watch

import (
	"errors"
	"strings"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// The counter stream is read from its protobuf wire bytes. SR Linux (and
// EOS, OpenConfig targets) send every counter as its own update carrying
// its full path: 3,584 keyed paths per 64-port switch per sample, and
// decoding them into gnmi messages was about 70 % of watch's CPU, with the
// garbage collector most of the rest. ingestRaw walks the fields of a
// SubscribeResponse in place instead and looks every update's path up by
// its bytes: a leaf's prefix and path encode the same on every sample and
// every switch of a platform, so the path is decoded (with the gnmi types,
// as ingest does) once per leaf per platform, and the steady state
// allocates nothing. SR Linux documents its notifications as a timestamp,
// a prefix concatenated with each update's path, updates (path, val) and
// deletes (documentation.nokia.com/srlinux/24-3/books/system-mgmt/gnmi.html,
// "Common notification messages"): the cache key is the prefix's bytes and
// the path's, so a target that puts the interface in the prefix, or
// nothing, is served alike. Anything it does not take apart itself (JSON values,
// deletes, values that are not unsigned integers, repeated singular
// fields) goes through proto.Unmarshal and ingest's code, per update, so
// the result is the same as ingest's (TestIngestRawMatchesProto). Bytes
// proto.Unmarshal refuses are an error here too, which ends the session
// (as a response gRPC cannot decode does); the updates before the bad one
// may have been applied, and the resync after the reconnect overwrites
// them.

// Field numbers of gnmi.proto (github.com/openconfig/gnmi/proto/gnmi).
const (
	fResponseUpdate    = 1 // SubscribeResponse.update (Notification)
	fResponseSync      = 3 // SubscribeResponse.sync_response
	fResponseError     = 4 // SubscribeResponse.error (deprecated)
	fNotificationPfx   = 2 // Notification.prefix
	fNotificationUpd   = 4 // Notification.update
	fNotificationDel   = 5 // Notification.delete
	fUpdatePath        = 1 // Update.path
	fUpdateValue       = 2 // Update.value (deprecated Value)
	fUpdateVal         = 3 // Update.val (TypedValue)
	fTypedValueString  = 1 // TypedValue.string_val
	fTypedValueInt     = 2 // TypedValue.int_val
	fTypedValueUint    = 3 // TypedValue.uint_val
	rawCacheMaxEntries = 1 << 17
)

// rawLeaf is what the wire bytes of a prefix and path resolve to: the
// leaf's shape and port, or info nil when the path is not a single counter
// keyed by interface (decoded in full every time).
type rawLeaf struct {
	info *shapeInfo
	port string
}

// rawScratch is one reader's reusable buffers.
type rawScratch struct {
	key []byte
	sb  strings.Builder
}

// responseKind says what a SubscribeResponse carried.
type responseKind int

const (
	respOther responseKind = iota
	respUpdate
	respSync
)

var errMalformed = errors.New("malformed SubscribeResponse")

// ingestRaw applies one SubscribeResponse given as wire bytes; it returns
// what the response was and, for a notification, its number of updates.
func (c *switchCounters) ingestRaw(b []byte, sc *rawScratch) (responseKind, int, error) {
	var note []byte
	kind, oneofs := respOther, 0
	whole := b
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, 0, errMalformed
		}
		b = b[n:]
		switch {
		case num == fResponseUpdate && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return 0, 0, errMalformed
			}
			note, kind, oneofs = v, respUpdate, oneofs+1
			b = b[n:]
			continue
		case num == fResponseSync && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return 0, 0, errMalformed
			}
			kind, oneofs = respOther, oneofs+1
			if v != 0 {
				kind = respSync
			}
			b = b[n:]
			continue
		case num == fResponseUpdate || num == fResponseSync || num == fResponseError:
			oneofs += 2 // a wire type proto would refuse, or the error case: its decoder decides
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return 0, 0, errMalformed
		}
		b = b[n:]
	}
	if oneofs > 1 {
		// Two members of the oneof (the last wins, a repeated message
		// merges): leave it to the protobuf decoder.
		var r gnmipb.SubscribeResponse
		if err := proto.Unmarshal(whole, &r); err != nil {
			return 0, 0, err
		}
		switch x := r.GetResponse().(type) {
		case *gnmipb.SubscribeResponse_SyncResponse:
			if x.SyncResponse {
				return respSync, 0, nil
			}
		case *gnmipb.SubscribeResponse_Update:
			return respUpdate, c.ingest(x.Update, &sc.sb), nil
		}
		return respOther, 0, nil
	}
	if kind != respUpdate {
		return kind, 0, nil
	}
	n, err := c.ingestNotification(note, sc)
	return respUpdate, n, err
}

// ingestNotification applies a Notification's wire bytes.
func (c *switchCounters) ingestNotification(b []byte, sc *rawScratch) (int, error) {
	// First pass: the prefix, and whether the layout is the plain one.
	var prefix []byte
	prefixes, updates, deletes := 0, 0, 0
	for rest := b; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		if n < 0 {
			return 0, errMalformed
		}
		rest = rest[n:]
		if typ == protowire.BytesType {
			switch num {
			case fNotificationPfx:
				prefixes++
			case fNotificationUpd:
				updates++
			case fNotificationDel:
				deletes++
			}
		} else if num == fNotificationPfx || num == fNotificationUpd || num == fNotificationDel {
			prefixes += 2 // proto refuses it: let it say why
		}
		n = protowire.ConsumeFieldValue(num, typ, rest)
		if n < 0 {
			return 0, errMalformed
		}
		if num == fNotificationPfx && typ == protowire.BytesType {
			prefix, _ = protowire.ConsumeBytes(rest)
		}
		rest = rest[n:]
	}
	if prefixes > 1 {
		var note gnmipb.Notification
		if err := proto.Unmarshal(b, &note); err != nil {
			return 0, err
		}
		return c.ingest(&note, &sc.sb), nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var pfx *gnmipb.Path // decoded when an update needs it
	decodedPfx := false
	prefixPath := func() (*gnmipb.Path, error) {
		if !decodedPfx && prefixes == 1 {
			pfx = &gnmipb.Path{}
			if err := proto.Unmarshal(prefix, pfx); err != nil {
				return nil, err
			}
		}
		decodedPfx = true
		return pfx, nil
	}
	if updates == 0 && deletes == 0 {
		// Nothing else decodes the prefix (a cache hit vouches for the
		// prefix it was made with): check it as proto.Unmarshal would.
		_, err := prefixPath()
		return 0, err
	}
	sc.key = protowire.AppendVarint(sc.key[:0], uint64(len(prefix)))
	sc.key = append(sc.key, prefix...)
	keyLen := len(sc.key)
	raw := c.shapes
	raw.mu.RLock()
	locked := true
	defer func() {
		if locked {
			raw.mu.RUnlock()
		}
	}()
	err := eachBytes(b, fNotificationUpd, func(ub []byte) error {
		path, v, ok := plainUpdate(ub)
		if ok {
			sc.key = append(sc.key[:keyLen], path...)
			if leaf, hit := raw.raw[string(sc.key)]; hit && leaf.info != nil {
				c.applyScalar(leaf.info, leaf.port, v)
				return nil
			}
		}
		// Not the plain form, or a leaf not seen yet: decode it.
		raw.mu.RUnlock()
		locked = false
		p, err := prefixPath()
		if err != nil {
			return err
		}
		var u gnmipb.Update
		if err := proto.Unmarshal(ub, &u); err != nil {
			return err
		}
		if ok {
			info, port, scalar := c.scalarShape(p, &u, &sc.sb)
			raw.putRaw(sc.key, rawLeaf{info: info, port: port})
			if scalar {
				c.applyScalar(info, port, v)
			} else {
				c.ingestUpdate(p, &u, &sc.sb)
			}
		} else {
			c.ingestUpdate(p, &u, &sc.sb)
		}
		raw.mu.RLock()
		locked = true
		return nil
	})
	if err != nil {
		return 0, err
	}
	raw.mu.RUnlock()
	locked = false
	if deletes > 0 {
		p, err := prefixPath()
		if err != nil {
			return 0, err
		}
		err = eachBytes(b, fNotificationDel, func(db []byte) error {
			var d gnmipb.Path
			if err := proto.Unmarshal(db, &d); err != nil {
				return err
			}
			c.ingestDelete(p, &d, &sc.sb)
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	return updates, nil
}

// eachBytes calls fn with the value of each bytes field num of the
// message b, in order, and stops at fn's first error. b is well formed
// (ingestNotification's first pass checked it).
func eachBytes(b []byte, num protowire.Number, fn func([]byte) error) error {
	for rest := b; len(rest) > 0; {
		n, typ, l := protowire.ConsumeTag(rest)
		rest = rest[l:]
		if n != num || typ != protowire.BytesType {
			rest = rest[protowire.ConsumeFieldValue(n, typ, rest):]
			continue
		}
		v, l := protowire.ConsumeBytes(rest)
		rest = rest[l:]
		if err := fn(v); err != nil {
			return err
		}
	}
	return nil
}

// putRaw remembers what a leaf's wire path resolves to (up to
// rawCacheMaxEntries per platform: past that, new leaves are decoded every
// time, which is slower but bounded in memory).
func (sc *shapeCache) putRaw(key []byte, leaf rawLeaf) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if len(sc.raw) < rawCacheMaxEntries {
		if _, ok := sc.raw[string(key)]; !ok {
			if leaf.port != "" {
				leaf.port = strings.Clone(leaf.port)
			}
			sc.raw[string(key)] = leaf
		}
	}
}

// plainUpdate takes apart an Update of the plain form: one path, one
// TypedValue holding an unsigned integer (uint_val, a non-negative int_val,
// or a string_val of decimal digits, as scalarUint reads them), nothing
// else proto would interpret. ok false: any other form.
func plainUpdate(b []byte) (path []byte, v uint64, ok bool) {
	paths, vals := 0, 0
	var val []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, 0, false
		}
		b = b[n:]
		switch {
		case num == fUpdatePath && typ == protowire.BytesType:
			path, n = protowire.ConsumeBytes(b)
			paths++
		case num == fUpdateVal && typ == protowire.BytesType:
			val, n = protowire.ConsumeBytes(b)
			vals++
		case num == fUpdatePath || num == fUpdateVal || num == fUpdateValue:
			return nil, 0, false
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return nil, 0, false
		}
		b = b[n:]
	}
	if paths != 1 || vals != 1 {
		return nil, 0, false
	}
	v, ok = plainUint(val)
	return path, v, ok
}

// plainUint reads a TypedValue holding exactly one field, an unsigned
// integer as scalarUint accepts it.
func plainUint(b []byte) (uint64, bool) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return 0, false
	}
	b = b[n:]
	var v uint64
	switch {
	case num == fTypedValueUint && typ == protowire.VarintType:
		v, n = protowire.ConsumeVarint(b)
	case num == fTypedValueInt && typ == protowire.VarintType:
		v, n = protowire.ConsumeVarint(b)
		if int64(v) < 0 {
			return 0, false
		}
	case num == fTypedValueString && typ == protowire.BytesType:
		var s []byte
		s, n = protowire.ConsumeBytes(b)
		if n >= 0 {
			var ok bool
			if v, ok = decimal(s); !ok {
				return 0, false
			}
		}
	default:
		return 0, false
	}
	if n < 0 || n != len(b) {
		return 0, false // malformed, or a second field
	}
	return v, true
}

// decimal parses what strconv.ParseUint(s, 10, 64) accepts: one or more
// digits, no sign, no overflow.
func decimal(s []byte) (uint64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	var v uint64
	for _, ch := range s {
		d := uint64(ch - '0')
		if d > 9 {
			return 0, false
		}
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}
