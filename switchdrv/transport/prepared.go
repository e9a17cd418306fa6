package transport

import (
	"context"
	"fmt"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// PreparedGet is a configuration GetRequest marshalled once, to be sent
// more than once: fabricctl reads a switch's owned paths to plan and the
// same paths again to verify its Set. Marshalling a GetRequest walks every
// path element's key map through protobuf's reflection twice (its size,
// then its bytes): about 90 µs for the 145 paths of a 32-port SR Linux
// switch, as much as the rest of a verify's comparison.
type PreparedGet struct {
	b     []byte
	enc   gnmipb.Encoding
	paths []*gnmipb.Path
	wire  [][]byte // wire[i]: paths[i] as marshalled in b
	// at[i] is where paths[i]'s field starts in b, when the path fields
	// come first in b, one after the other (as proto writes them), else
	// nil.
	at []int
}

// Paths are the paths the request reads.
func (g *PreparedGet) Paths() []*gnmipb.Path { return g.paths }

// PrepareGetConfig marshals the GetRequest GetConfig(paths) would send now,
// in the encoding Capabilities chose.
func (c *Client) PrepareGetConfig(paths []*gnmipb.Path) (*PreparedGet, error) {
	g, err := prepareGet(paths, c.Encoding())
	if err != nil {
		return nil, &Error{Switch: c.name, Op: "get", Path: PathsString(paths), Err: err}
	}
	return g, nil
}

func prepareGet(paths []*gnmipb.Path, enc gnmipb.Encoding) (*PreparedGet, error) {
	// Deterministic: the keys of a path element in sorted order, as a
	// target that sorts them sends them back (readReply compares bytes).
	b, ok := marshalGetConfig(paths, enc)
	if !ok {
		var err error
		if b, err = (proto.MarshalOptions{Deterministic: true}).Marshal(&gnmipb.GetRequest{Path: paths, Encoding: enc, Type: gnmipb.GetRequest_CONFIG}); err != nil {
			return nil, err
		}
	}
	g := &PreparedGet{b: b, enc: enc, paths: paths, wire: make([][]byte, 0, len(paths)), at: make([]int, 0, len(paths))}
	first := true // only path fields so far
	for rest := b; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		if n < 0 {
			break
		}
		m := protowire.ConsumeFieldValue(num, typ, rest[n:])
		if m < 0 {
			break
		}
		if num == requestPath {
			v, _ := protowire.ConsumeBytes(rest[n:])
			g.wire = append(g.wire, v)
			if first {
				g.at = append(g.at, len(b)-len(rest))
			} else {
				g.at = nil
			}
		} else {
			first = false
		}
		rest = rest[n+m:]
	}
	if len(g.wire) != len(paths) {
		// proto.Marshal wrote what it was given; anything else is a bug.
		return nil, fmt.Errorf("marshalled %d of %d paths", len(g.wire), len(paths))
	}
	return g, nil
}

// From is the prepared GetRequest of g's paths from the i-th on, made
// without marshalling anything: the tail of g's bytes from that path's
// field, which is what proto's deterministic marshalling writes for those
// paths (the paths in order, then the type and the encoding). nil when g's
// bytes are not laid out so, or i is out of range. Plan reads the
// requirements and the owned paths in one Get, the owned paths last;
// verify sends the owned paths' tail of it.
func (g *PreparedGet) From(i int) *PreparedGet {
	if i < 0 || i >= len(g.paths) || len(g.at) != len(g.paths) {
		return nil
	}
	at := make([]int, len(g.paths)-i)
	for j := range at {
		at[j] = g.at[i+j] - g.at[i]
	}
	return &PreparedGet{b: g.b[g.at[i]:], enc: g.enc, paths: g.paths[i:], wire: g.wire[i:], at: at}
}

// GetPrepared is GetConfig(g.Paths()) with the request's bytes g already
// holds. A request prepared before the client's encoding changed is
// marshalled anew, in the current encoding. The reply is decoded as
// GetConfig's, except that an update's path that repeats an asked path
// is that very *gnmipb.Path of g.Paths(), which the caller only reads.
func (c *Client) GetPrepared(ctx context.Context, g *PreparedGet) ([]*gnmipb.Notification, error) {
	if g.enc != c.Encoding() {
		return c.GetConfig(ctx, g.paths)
	}
	var reply *getReply
	err := c.retry(ctx, "get", func(ctx context.Context) error {
		reply = &getReply{g: g}
		return c.conn.Invoke(ctx, gnmipb.GNMI_Get_FullMethodName, g, reply)
	})
	if err != nil {
		return nil, &Error{Switch: c.name, Op: "get", Path: PathsString(g.paths), Err: err}
	}
	c.log.Debug("get", "paths", len(g.paths), "notifications", len(reply.notes))
	return reply.notes, nil
}

// GetPreparedJSON is GetPrepared for a caller that wants each asked path's
// JSON value and nothing else of the reply (plan's read for a comparison
// only): vals[i] is the JSON or JSON_IETF text answering g.Paths()[i], nil
// when the reply has none, read without a Notification, Update or
// TypedValue made for it. A reply of another shape (a prefix, updates of
// paths not asked or of one path twice, other encodings) comes back as
// GetPrepared gives it, in notes, with vals nil.
func (c *Client) GetPreparedJSON(ctx context.Context, g *PreparedGet) (vals [][]byte, notes []*gnmipb.Notification, err error) {
	if g.enc != c.Encoding() {
		notes, err = c.GetConfig(ctx, g.paths)
		return nil, notes, err
	}
	var reply *getReply
	err = c.retry(ctx, "get", func(ctx context.Context) error {
		reply = &getReply{g: g, values: true}
		return c.conn.Invoke(ctx, gnmipb.GNMI_Get_FullMethodName, g, reply)
	})
	if err != nil {
		return nil, nil, &Error{Switch: c.name, Op: "get", Path: PathsString(g.paths), Err: err}
	}
	c.log.Debug("get", "paths", len(g.paths), "notifications", len(reply.notes), "values", len(reply.vals))
	return reply.vals, reply.notes, nil
}

// SetOutcome sends req as Set does, exactly once, for a caller that uses
// only the outcome: the reply is checked to be well-formed protobuf but
// not decoded. A SetResponse repeats every path of the request, each with
// its key maps (a 32-port SR Linux switch's reply takes about as long to
// decode as its request takes to marshal); fabricctl reads the switch
// back to verify instead. A failure whose effect is unknown wraps
// ErrOutcomeUnknown, as with Set.
func (c *Client) SetOutcome(ctx context.Context, req *gnmipb.SetRequest) error {
	ctx, cancel := context.WithTimeout(ctx, c.SetTimeout())
	defer cancel()
	start := time.Now()
	if err := c.conn.Invoke(ctx, gnmipb.GNMI_Set_FullMethodName, req, &setReply{}); err != nil {
		return c.setError(req, err)
	}
	c.log.Debug("set", "replace", len(req.GetReplace()), "update", len(req.GetUpdate()),
		"delete", len(req.GetDelete()), "took", time.Since(start))
	return nil
}

// setError is the Error of a failed Set.
func (c *Client) setError(req *gnmipb.SetRequest, err error) error {
	switch Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled, codes.Unknown:
		err = fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
	}
	return &Error{Switch: c.name, Op: "set", Path: PathsString(setPaths(req)), Err: err}
}

// setReply receives a SetResponse that is only checked (SetOutcome).
type setReply struct{}

// checkWire reports whether b is well-formed protobuf: a sequence of
// fields, each with a valid tag, wire type and length. The fields
// themselves (nested messages) are not looked into.
func checkWire(b []byte) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("malformed reply: %w", protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return fmt.Errorf("malformed reply: field %d: %w", num, protowire.ParseError(m))
		}
		b = b[n+m:]
	}
	return nil
}
