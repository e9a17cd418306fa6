package twin

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
)

// server implements gnmipb.GNMIServer on a Twin.
type server struct {
	gnmipb.UnimplementedGNMIServer
	t *Twin
}

func (s *server) Capabilities(context.Context, *gnmipb.CapabilityRequest) (*gnmipb.CapabilityResponse, error) {
	return &gnmipb.CapabilityResponse{
		SupportedModels:    s.t.prof.models,
		SupportedEncodings: s.t.prof.encodings,
		GNMIVersion:        "0.10.0",
	}, nil
}

// join puts prefix and path together the way the gNMI spec says.
func join(prefix, p *gnmipb.Path) *gnmipb.Path {
	out := &gnmipb.Path{Origin: p.GetOrigin(), Target: prefix.GetTarget()}
	if out.Origin == "" {
		out.Origin = prefix.GetOrigin()
	}
	out.Elem = append(slices.Clone(prefix.GetElem()), p.GetElem()...)
	return out
}

// check says whether the twin knows path p (write = for a Set).
func (t *Twin) check(p *gnmipb.Path, write bool) error {
	target := p.GetTarget()
	if target != "" && target != t.opts.Name {
		if t.opts.Platform != "sonic" {
			return status.Errorf(codes.NotFound, "unknown target %q", target)
		}
		if write {
			return status.Errorf(codes.PermissionDenied, "target %s is read-only", target)
		}
		return nil
	}
	roots, ok := t.prof.roots[p.GetOrigin()]
	if !ok {
		return status.Errorf(codes.InvalidArgument, "origin %q is not supported by this %s target", p.GetOrigin(), t.opts.Platform)
	}
	if roots == nil || len(p.GetElem()) == 0 {
		return nil
	}
	name := jtree.Name(p.GetElem()[0].GetName())
	if !slices.Contains(roots, name) {
		return status.Errorf(codes.NotFound, "path %s: unknown schema node %q", jtree.PathKey(p), name)
	}
	if write && p.GetOrigin() == "sonic-db" && name != "CONFIG_DB" {
		return status.Errorf(codes.PermissionDenied, "path %s: only CONFIG_DB is writable", jtree.PathKey(p))
	}
	return nil
}

func (s *server) Get(ctx context.Context, req *gnmipb.GetRequest) (*gnmipb.GetResponse, error) {
	t := s.t
	t.mu.Lock()
	t.gets++
	t.mu.Unlock()
	if !slices.Contains(t.prof.encodings, req.GetEncoding()) {
		return nil, status.Errorf(codes.InvalidArgument, "encoding %s is not supported", req.GetEncoding())
	}
	paths := req.GetPath()
	if len(paths) == 0 {
		paths = []*gnmipb.Path{{}}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now().UnixNano()
	var notes []*gnmipb.Notification
	var finder jtree.Finder // the tree does not change during this Get (t.mu)
	for _, rp := range paths {
		p := join(req.GetPrefix(), rp)
		if err := t.check(p, false); err != nil {
			return nil, err
		}
		n := &gnmipb.Notification{Timestamp: now, Prefix: req.GetPrefix()}
		ns := t.namespace(p)
		if p.GetOrigin() == "cli" && !isShowCommand(p) {
			// EOS runs the path element as a show command; an empty path
			// is not one.
			return nil, status.Errorf(codes.InvalidArgument, "path %s: origin cli reads a show command (cli:/show running-config)", jtree.PathKey(p))
		}
		if lines, ok := t.data[ns].([]string); ok || p.GetOrigin() == "cli" {
			n.Update = append(n.Update, &gnmipb.Update{Path: rp, Val: &gnmipb.TypedValue{
				Value: &gnmipb.TypedValue_AsciiVal{AsciiVal: jtree.CLIText(lines)}}})
			notes = append(notes, n)
			continue
		}
		v, ok := t.lookup(ns, p.GetElem(), req.GetType(), &finder)
		if ok {
			tv, err := encode(v, req.GetEncoding())
			if err != nil {
				return nil, status.Errorf(codes.Internal, "path %s: %v", jtree.PathKey(p), err)
			}
			n.Update = append(n.Update, &gnmipb.Update{Path: rp, Val: tv})
		}
		notes = append(notes, n)
	}
	return &gnmipb.GetResponse{Notification: notes}, nil
}

func encode(v any, enc gnmipb.Encoding) (*gnmipb.TypedValue, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if enc == gnmipb.Encoding_JSON {
		return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonVal{JsonVal: b}}, nil
	}
	return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: b}}, nil
}

// decode turns a TypedValue into a tree value. Member names stay as the
// client sent them (module qualifiers included) and Get returns them so, as
// a device answers RFC 7951 JSON.
func decode(tv *gnmipb.TypedValue) (any, error) {
	v, _, err := jtree.TypedQualified(tv)
	return v, err
}

func jsonNumber(s string) json.Number { return json.Number(s) }

func cloneData(d map[string]any) map[string]any {
	out := make(map[string]any, len(d))
	for k, v := range d {
		if lines, ok := v.([]string); ok {
			out[k] = slices.Clone(lines)
			continue
		}
		out[k] = jtree.Clone(v)
	}
	return out
}

func (s *server) Set(ctx context.Context, req *gnmipb.SetRequest) (*gnmipb.SetResponse, error) {
	t := s.t
	t.mu.Lock()
	if t.lateDone != nil {
		late, done := t.lateBy, t.lateDone
		if t.lateArrived != nil {
			close(t.lateArrived)
		}
		t.lateBy, t.lateDone, t.lateArrived = 0, nil, nil
		t.mu.Unlock()
		defer close(done)
		time.Sleep(late) // deliberately deaf to ctx: the commit is under way
		t.mu.Lock()
	}
	if len(t.failNext) > 0 {
		err := t.failNext[0]
		t.failNext = t.failNext[1:]
		t.mu.Unlock()
		return nil, err
	}
	if t.hangSets > 0 {
		t.hangSets--
		if t.hangArrived != nil {
			close(t.hangArrived)
			t.hangArrived = nil
		}
		t.mu.Unlock()
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	drop := t.dropNext > 0
	dropAfter := drop && t.dropApply
	if drop {
		t.dropNext--
	}
	if drop && !dropAfter {
		t.mu.Unlock()
		t.lis.dropAll()
		return nil, status.Error(codes.Unavailable, "twin: connection dropped (injected)")
	}
	data, results, err := t.prepare(req)
	if err != nil {
		t.mu.Unlock()
		return nil, err
	}
	ts := time.Now().UnixNano()
	if t.loseSets > 0 {
		t.loseSets--
		t.mu.Unlock()
		return &gnmipb.SetResponse{Prefix: req.GetPrefix(), Response: results, Timestamp: ts}, nil
	}
	if t.opts.CellBytes > 0 && t.opts.Platform != intent.PlatformSONiC {
		// Not on SONiC: CONFIG_DB is a redis hash and keeps the string
		// that was written; buffermgrd/orchagent hand it to the SAI and
		// the ASIC's cell rounding happens there, below CONFIG_DB (a
		// 150000 threshold reads back 150000, not 150016).
		for _, v := range data {
			roundThresholds(v, t.opts.CellBytes)
		}
	}
	flapped := t.countFlaps(t.data, data)
	t.data = data
	t.recordFlaps(flapped)
	t.sets++
	t.mu.Unlock()
	if dropAfter {
		t.lis.dropAll()
		return nil, status.Error(codes.Unavailable, "twin: connection dropped after commit (injected)")
	}
	return &gnmipb.SetResponse{Prefix: req.GetPrefix(), Response: results, Timestamp: ts}, nil
}

// isShowCommand reports whether a cli-origin path names a show command that
// prints the running configuration, the only one the twin answers.
func isShowCommand(p *gnmipb.Path) bool {
	es := p.GetElem()
	return len(es) == 1 && strings.HasPrefix(es[0].GetName(), "show running-config")
}

// write applies one replace or update to data.
func (t *Twin) write(data map[string]any, p *gnmipb.Path, tv *gnmipb.TypedValue, replace bool) error {
	ns := t.namespace(p)
	if p.GetOrigin() == "cli" {
		a, ok := tv.GetValue().(*gnmipb.TypedValue_AsciiVal)
		if !ok {
			return status.Errorf(codes.InvalidArgument, "path %s: origin cli takes ascii_val", jtree.PathKey(p))
		}
		lines, _ := data[ns].([]string)
		if replace {
			lines = nil
		}
		data[ns] = applyCLI(lines, a.AsciiVal)
		return nil
	}
	v, err := decode(tv)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "path %s: %v", jtree.PathKey(p), err)
	}
	if t.sonicConfig(p) {
		return t.sonicWrite(data, p, v, replace)
	}
	root, _ := data[ns].(map[string]any)
	if root == nil {
		root = map[string]any{}
		data[ns] = root
	}
	if len(p.GetElem()) == 0 {
		m, ok := v.(map[string]any)
		if !ok {
			return status.Errorf(codes.InvalidArgument, "path %s: value at the root must be an object", jtree.PathKey(p))
		}
		for k := range m {
			if err := t.check(&gnmipb.Path{Origin: p.GetOrigin(), Target: p.GetTarget(), Elem: []*gnmipb.PathElem{{Name: k}}}, true); err != nil {
				return err
			}
		}
		if replace {
			data[ns] = m
			return nil
		}
		return jtree.Update(root, nil, m)
	}
	if replace {
		err = jtree.Replace(root, p.GetElem(), v)
	} else {
		err = jtree.Update(root, p.GetElem(), v)
	}
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "path %s: %v", jtree.PathKey(p), err)
	}
	return nil
}

// applyCLI applies configuration text the way a CLI session would (see
// jtree.CLIApply); the twin keeps the flat lines.
func applyCLI(lines []string, text string) []string {
	return jtree.CLIApply(lines, jtree.CLILines(text))
}

// roundThresholds rounds numeric buffer leaves (jtree.IsBufferLeaf) up to a
// multiple of cell, keeping strings strings and numbers numbers.
func roundThresholds(v any, cell int64) {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			if jtree.IsBufferLeaf(k) {
				if n, ok := jtree.Int(c); ok && n > 0 {
					r := (n + cell - 1) / cell * cell
					if _, isStr := c.(string); isStr {
						t[k] = strconv.FormatInt(r, 10)
					} else {
						t[k] = jsonNumber(strconv.FormatInt(r, 10))
					}
					continue
				}
			}
			roundThresholds(c, cell)
		}
	case []any:
		for _, c := range t {
			roundThresholds(c, cell)
		}
	}
}

func (s *server) Subscribe(stream gnmipb.GNMI_SubscribeServer) error {
	t := s.t
	req, err := stream.Recv()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return err
	}
	sl := req.GetSubscribe()
	if sl == nil {
		return status.Error(codes.InvalidArgument, "first SubscribeRequest must carry a SubscriptionList")
	}
	enc := sl.GetEncoding()
	if !slices.Contains(t.prof.encodings, enc) {
		return status.Errorf(codes.InvalidArgument, "encoding %s is not supported", enc)
	}
	if t.profiled() && t.opts.Profile.Write.NoNativeSubscribe {
		// sonic-gnmi before 202411 (profile write.noNativeSubscribeSource):
		// Subscribe knows origin openconfig and targets, not sonic-db.
		origin := sl.GetPrefix().GetOrigin()
		for _, sub := range sl.GetSubscription() {
			if origin == "" {
				origin = sub.GetPath().GetOrigin()
			}
		}
		if origin != "" && origin != "openconfig" {
			return status.Errorf(codes.Unimplemented, "Unsupported origin: %s", origin)
		}
	}
	switch sl.GetMode() {
	case gnmipb.SubscriptionList_ONCE:
	case gnmipb.SubscriptionList_STREAM:
		return s.subscribeStream(stream, sl) // stream.go
	default:
		return status.Errorf(codes.Unimplemented, "twin: subscription mode %s is not supported (ONCE and STREAM only)", sl.GetMode())
	}
	var notes []*gnmipb.Notification
	t.mu.Lock()
	now := time.Now().UnixNano()
	for _, sub := range sl.GetSubscription() {
		p := join(sl.GetPrefix(), sub.GetPath())
		if err := t.check(p, false); err != nil {
			t.mu.Unlock()
			return err
		}
		v, ok := t.lookup(t.namespace(p), p.GetElem(), gnmipb.GetRequest_ALL, nil)
		if !ok {
			continue
		}
		n := &gnmipb.Notification{Timestamp: now, Prefix: sl.GetPrefix()}
		if t.prof.leafSubscribe {
			walkLeaves(v, sub.GetPath().GetElem(), func(elems []*gnmipb.PathElem, leaf any) {
				n.Update = append(n.Update, &gnmipb.Update{Path: &gnmipb.Path{Origin: sub.GetPath().GetOrigin(), Elem: elems}, Val: scalar(leaf)})
			})
		} else {
			tv := scalar(v)
			if _, isObj := v.(map[string]any); isObj {
				if tv, err = encode(v, enc); err != nil {
					t.mu.Unlock()
					return status.Errorf(codes.Internal, "%v", err)
				}
			}
			n.Update = append(n.Update, &gnmipb.Update{Path: sub.GetPath(), Val: tv})
		}
		notes = append(notes, n)
	}
	t.mu.Unlock()
	for _, n := range notes {
		if err := stream.Send(&gnmipb.SubscribeResponse{Response: &gnmipb.SubscribeResponse_Update{Update: n}}); err != nil {
			return err
		}
	}
	return stream.Send(&gnmipb.SubscribeResponse{Response: &gnmipb.SubscribeResponse_SyncResponse{SyncResponse: true}})
}

// walkLeaves calls fn for every leaf (and leaf-list) below v.
func walkLeaves(v any, elems []*gnmipb.PathElem, fn func([]*gnmipb.PathElem, any)) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			walkLeaves(x[k], append(slices.Clone(elems), &gnmipb.PathElem{Name: k}), fn)
		}
	case []any:
		if len(x) > 0 {
			if _, isObj := x[0].(map[string]any); isObj && len(elems) > 0 {
				for _, e := range x {
					m, _ := e.(map[string]any)
					last := elems[len(elems)-1]
					keyed := &gnmipb.PathElem{Name: last.GetName(), Key: map[string]string{}}
					for _, k := range jtree.ListKey(m) {
						keyed.Key[k] = jtree.Canon(m[k])
					}
					walkLeaves(m, append(slices.Clone(elems[:len(elems)-1]), keyed), fn)
				}
				return
			}
		}
		fn(elems, x)
	default:
		fn(elems, x)
	}
}

// scalar encodes a leaf as a typed scalar value; containers as JSON.
func scalar(v any) *gnmipb.TypedValue {
	switch x := v.(type) {
	case string:
		return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_StringVal{StringVal: x}}
	case bool:
		return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_BoolVal{BoolVal: x}}
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_IntVal{IntVal: n}}
		}
		if n, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_UintVal{UintVal: n}}
		}
		f, err := x.Float64()
		if err != nil {
			f = math.NaN()
		}
		return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_DoubleVal{DoubleVal: f}}
	case []any:
		ll := &gnmipb.ScalarArray{}
		for _, e := range x {
			ll.Element = append(ll.Element, scalar(e))
		}
		return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_LeaflistVal{LeaflistVal: ll}}
	}
	b, _ := json.Marshal(v)
	return &gnmipb.TypedValue{Value: &gnmipb.TypedValue_JsonIetfVal{JsonIetfVal: b}}
}

// prepare applies req to a copy of the datastore the way the device does
// (write semantics, whole-datastore validation) and returns the copy; the
// caller holds t.mu and commits it. Nothing changes on error.
func (t *Twin) prepare(req *gnmipb.SetRequest) (map[string]any, []*gnmipb.UpdateResult, error) {
	if t.profiled() && !t.opts.Profile.Write.NativeWriteEnabled() {
		return nil, nil, nativeWriteDisabled
	}
	data := cloneData(t.data)
	touched := map[string]bool{}
	var keyDeletes []*gnmipb.Path // SONiC CONFIG_DB deletes (GCU's empty-table rule)
	var results []*gnmipb.UpdateResult
	res := func(p *gnmipb.Path, op gnmipb.UpdateResult_Operation) {
		results = append(results, &gnmipb.UpdateResult{Path: p, Op: op})
	}
	apply := func() error {
		for _, dp := range req.GetDelete() {
			p := join(req.GetPrefix(), dp)
			if err := t.check(p, true); err != nil {
				return err
			}
			ns := t.namespace(p)
			touched[ns] = true
			if t.sonicConfig(p) {
				keyDeletes = append(keyDeletes, p)
			}
			if _, ok := data[ns].([]string); ok || p.GetOrigin() == "cli" {
				delete(data, ns)
			} else if m, ok := data[ns].(map[string]any); ok {
				if err := jtree.Delete(m, p.GetElem()); err != nil {
					return status.Errorf(codes.InvalidArgument, "delete %s: %v", jtree.PathKey(p), err)
				}
			}
			res(dp, gnmipb.UpdateResult_DELETE)
		}
		for i, ops := range [][]*gnmipb.Update{req.GetReplace(), req.GetUpdate()} {
			replace := i == 0
			op := gnmipb.UpdateResult_UPDATE
			if replace {
				op = gnmipb.UpdateResult_REPLACE
			}
			for _, u := range ops {
				p := join(req.GetPrefix(), u.GetPath())
				if err := t.check(p, true); err != nil {
					return err
				}
				if t.opts.Validate != nil && p.GetOrigin() != "cli" {
					if err := t.opts.Validate(req.GetPrefix(), u); err != nil {
						return status.Errorf(codes.InvalidArgument, "path %s: schema: %v", jtree.PathKey(p), err)
					}
				}
				touched[t.namespace(p)] = true
				if err := t.write(data, p, u.GetVal(), replace); err != nil {
					return err
				}
				res(u.GetPath(), op)
			}
		}
		return nil
	}
	if err := apply(); err != nil {
		return nil, nil, err
	}
	if err := t.gcuFieldOperations(t.data, data); err != nil {
		return nil, nil, err
	}
	if err := t.emptyTables(t.data, data, keyDeletes); err != nil {
		return nil, nil, err
	}
	if err := t.validate(data, touched); err != nil {
		return nil, nil, err
	}
	return data, results, nil
}
