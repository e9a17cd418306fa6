package twin

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/fabricctl/fabricctl/intent"
	"github.com/fabricctl/fabricctl/internal/profile"
	"github.com/fabricctl/fabricctl/internal/yangcheck"
	"github.com/fabricctl/fabricctl/switchdrv/internal/jtree"
)

// Options configure a twin.
type Options struct {
	// Name is the switch the twin stands in for (also accepted as gNMI target).
	Name     string
	Platform intent.Platform
	// Addr to listen on; "" = 127.0.0.1:0. Only loopback addresses are allowed.
	Addr string
	// TLS, when set, serves gRPC over TLS with this config (nil = plaintext).
	TLS *tls.Config
	// Username and Password, when set, must arrive as gRPC metadata.
	Username, Password string
	// Validate, when set, checks every JSON replace and update of a Set (a
	// YANG validator such as yangcheck.Schema.CheckUpdate); an error rejects
	// the whole Set with InvalidArgument, as a device rejects a payload its
	// schema does not allow.
	Validate func(prefix *gnmipb.Path, u *gnmipb.Update) error
	// CellBytes, when > 0, rounds every stored buffer leaf (thresholds)
	// up to a multiple of it on each Set, as buffer hardware does
	// (read-back differs from the written value). SONiC twins ignore it:
	// CONFIG_DB keeps the string that was written and the cell rounding
	// happens below it (see Set).
	CellBytes int64

	// Profile, when set, makes the twin DEVICE-FAITHFUL for that release
	// profile (internal/profile): SONiC's write semantics per branch
	// (sonic-gnmi + generic config updater: Replace of a missing key, Update
	// replacing a hash, absent tables, port flaps, the telemetry container
	// refusing writes), the OpenConfig defaults mode, and, with Factory, the
	// factory-default datastore. Platform may be left empty (it is the
	// profile's).
	Profile *profile.Profile
	// Factory starts the twin from the profile's factory-default datastore
	// instead of an empty one.
	Factory bool
	// Validator, when set, validates the whole datastore after every Set
	// (before it commits); an error rejects the whole Set with that text.
	Validator DatastoreValidator
	// Defaults overrides the profile's Get defaults mode (OpenConfig):
	// profile.PopulateDefaults or profile.TrimDefaults.
	Defaults string
	// Schema is the YANG the defaults mode reads default values from
	// (required when a defaults mode is in effect).
	Schema *yangcheck.Schema
	// BuildVersion is the build_version of the image a SONiC twin of a
	// profile reports at target OTHERS /osversion/build, as sonic-gnmi
	// does (sonic_data_client/non_db_client.go getBuildVersion: the JSON
	// {"build_version": "SONiC.<build_version>", "error": ""}). "" is a
	// community build of the profile's branch, <release>.0-twin (named as
	// sonic-buildimage's sonic_get_version names one:
	// <branch>.<build number>-<commit>); NoBuildVersion: the path answers
	// nothing (a server without it).
	BuildVersion   string
	NoBuildVersion bool
}

// targetProfile is what a platform announces and accepts.
type targetProfile struct {
	models    []*gnmipb.ModelData
	encodings []gnmipb.Encoding
	// roots maps an origin ("" = default) to the top-level names it accepts.
	roots map[string][]string
	// leafSubscribe: Subscribe ONCE answers leaf by leaf (OpenConfig style)
	// instead of one JSON value per subscribed path (sonic-gnmi style).
	leafSubscribe bool
}

func model(name, org, version string) *gnmipb.ModelData {
	return &gnmipb.ModelData{Name: name, Organization: org, Version: version}
}

var jsonEncodings = []gnmipb.Encoding{gnmipb.Encoding_JSON, gnmipb.Encoding_JSON_IETF}

func profileFor(p intent.Platform) (targetProfile, error) {
	switch p {
	case intent.PlatformSRLinux:
		return targetProfile{
			models: []*gnmipb.ModelData{
				model("srl_nokia-qos", "Nokia", "2024-10-31"),
				model("srl_nokia-interfaces", "Nokia", "2024-10-31"),
				model("srl_nokia-system", "Nokia", "2024-10-31"),
			},
			encodings:     append(slices.Clone(jsonEncodings), gnmipb.Encoding_ASCII, gnmipb.Encoding_PROTO),
			roots:         map[string][]string{"": {"qos", "interface", "system"}},
			leafSubscribe: true,
		}, nil
	case intent.PlatformSONiC:
		return targetProfile{
			models: []*gnmipb.ModelData{
				model("sonic-db", "SONiC", "0.1.0"),
				model("sonic-port-qos-map", "SONiC", "2019-07-01"),
				model("sonic-wred-profile", "SONiC", "2019-07-01"),
				model("sonic-scheduler", "SONiC", "2019-07-01"),
				model("sonic-pfcwd", "SONiC", "2021-03-17"),
			},
			encodings: jsonEncodings,
			roots: map[string][]string{
				"sonic-db": {"CONFIG_DB", "APPL_DB", "STATE_DB", "COUNTERS_DB"},
			},
		}, nil
	case intent.PlatformEOS:
		return targetProfile{
			models: []*gnmipb.ModelData{
				model("openconfig-qos", "OpenConfig working group", "0.11.2"),
				model("openconfig-interfaces", "OpenConfig working group", "3.5.0"),
				model("arista-qos-augments", "Arista Networks, Inc.", "0.6.0"),
			},
			encodings:     append(slices.Clone(jsonEncodings), gnmipb.Encoding_ASCII),
			roots:         map[string][]string{"": {"qos", "interfaces"}, "openconfig": {"qos", "interfaces"}, "cli": nil},
			leafSubscribe: true,
		}, nil
	case intent.PlatformOpenConfig:
		return targetProfile{
			models: []*gnmipb.ModelData{
				model("openconfig-qos", "OpenConfig working group", "2.2.0"),
				model("openconfig-interfaces", "OpenConfig working group", "3.7.1"),
			},
			encodings:     []gnmipb.Encoding{gnmipb.Encoding_JSON_IETF},
			roots:         map[string][]string{"": {"qos", "interfaces"}, "openconfig": {"qos", "interfaces"}},
			leafSubscribe: true,
		}, nil
	}
	return targetProfile{}, fmt.Errorf("twin: unknown platform %q", p)
}

// Twin is a running device twin.
type Twin struct {
	opts Options
	prof targetProfile
	lis  *trackingListener
	srv  *grpc.Server

	mu   sync.Mutex
	data map[string]any // namespace -> tree (map[string]any) or CLI lines ([]string)
	// state is the config false data (counters, Play and Rate), namespace
	// -> tree, kept apart from data as a device keeps its state apart from
	// its configuration datastore: a Set never copies, validates or changes
	// it, and a Get of type CONFIG does not see it (see view).
	state map[string]map[string]any
	sets  int // committed SetRequests
	gets  int // GetRequests received
	// flaps counts port flaps caused by port-critical changes (SONiC).
	flaps map[string]int
	// faults
	failNext  []error
	dropNext  int  // drop the connection on the next N Sets
	dropApply bool // ... after committing the Set (outcome unknown to the client)
	delay     time.Duration
	hang      bool
	hangSets  int // hang the next N Sets (nothing committed)
	loseSets  int // acknowledge the next N Sets without committing them
	// commit the next Set only after lateBy, whether or not its client is
	// still waiting; lateDone is closed when that handler has returned
	lateBy   time.Duration
	lateDone chan struct{}
	// lateArrived is closed when that Set has arrived (nil: nobody asked)
	lateArrived chan struct{}
	// hangArrived is closed when the next hung Set arrives (nil: nobody
	// asked)
	hangArrived chan struct{}
}

// newTwin checks opts and builds a twin with its datastore (no listener).
func newTwin(opts Options) (*Twin, error) {
	if opts.Profile != nil {
		if opts.Platform == "" {
			opts.Platform = intent.Platform(opts.Profile.Platform)
		}
		if string(opts.Platform) != opts.Profile.Platform {
			return nil, fmt.Errorf("twin %s: profile %s is for platform %s, not %s", opts.Name, opts.Profile.Name, opts.Profile.Platform, opts.Platform)
		}
		if opts.Schema != nil && opts.Schema.Release() != opts.Profile.YANG.Release {
			return nil, fmt.Errorf("twin %s: profile %s speaks the YANG of release %s, not %s (yangcheck.ReleaseSchema)", opts.Name, opts.Profile.Name, opts.Profile.YANG.Release, opts.Schema.Release())
		}
	} else if opts.Factory {
		return nil, fmt.Errorf("twin %s: factory defaults need a profile", opts.Name)
	}
	if opts.Defaults == "" && opts.Profile != nil {
		opts.Defaults = opts.Profile.Write.Defaults
	}
	switch opts.Defaults {
	case "":
	case profile.PopulateDefaults, profile.TrimDefaults:
		if opts.Schema == nil {
			return nil, fmt.Errorf("twin %s: defaults mode %s needs Options.Schema", opts.Name, opts.Defaults)
		}
	default:
		return nil, fmt.Errorf("twin %s: defaults mode %q (want %s or %s)", opts.Name, opts.Defaults, profile.PopulateDefaults, profile.TrimDefaults)
	}
	prof, err := profileFor(opts.Platform)
	if err != nil {
		return nil, err
	}
	t := &Twin{opts: opts, prof: prof, data: map[string]any{}}
	if opts.Factory {
		if err := t.loadFactory(); err != nil {
			return nil, err
		}
	}
	if opts.Profile != nil && opts.Platform == intent.PlatformSONiC && !opts.NoBuildVersion {
		bv := t.buildVersion()
		t.data["@OTHERS"] = map[string]any{"osversion": map[string]any{"build": map[string]any{"build_version": "SONiC." + bv, "error": ""}}}
	}
	return t, nil
}

// New returns a twin that serves nothing: Apply runs SetRequests against
// its datastore with the device's write semantics and validation (render
// --validate and plan use it); Value reads it.
func New(opts Options) (*Twin, error) { return newTwin(opts) }

// Apply applies req as the device would (the Set of a served twin, without
// the injected faults) and commits it; the error is the device's refusal.
func (t *Twin) Apply(req *gnmipb.SetRequest) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	data, _, err := t.prepare(req)
	if err != nil {
		return err
	}
	flapped := t.countFlaps(t.data, data)
	t.data = data
	t.recordFlaps(flapped)
	t.sets++
	return nil
}

// Start listens on loopback and serves gNMI until Close.
func Start(opts Options) (*Twin, error) {
	t, err := newTwin(opts)
	if err != nil {
		return nil, err
	}
	opts = t.opts
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("twin %s: listen address %q: %w", opts.Name, opts.Addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("twin %s: listen address %s is not loopback", opts.Name, opts.Addr)
	}
	l, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("twin %s: %w", opts.Name, err)
	}
	t.lis = &trackingListener{Listener: l, conns: map[net.Conn]struct{}{}}
	sopts := []grpc.ServerOption{grpc.UnaryInterceptor(t.unaryAuth), grpc.StreamInterceptor(t.streamAuth)}
	if opts.TLS != nil {
		sopts = append(sopts, grpc.Creds(credentials.NewTLS(opts.TLS)))
	}
	t.srv = grpc.NewServer(sopts...)
	gnmipb.RegisterGNMIServer(t.srv, &server{t: t})
	go t.srv.Serve(t.lis) //nolint:errcheck // Serve returns when Close stops it.
	return t, nil
}

// Addr is the twin's host:port ("" for a twin made by New).
func (t *Twin) Addr() string {
	if t.lis == nil {
		return ""
	}
	return t.lis.Addr().String()
}

// Name is the switch the twin stands in for.
func (t *Twin) Name() string { return t.opts.Name }

// Platform is the platform the twin imitates.
func (t *Twin) Platform() intent.Platform { return t.opts.Platform }

// Close stops the twin, dropping open connections.
func (t *Twin) Close() {
	t.mu.Lock()
	t.hang = false
	t.mu.Unlock()
	if t.srv != nil {
		t.srv.Stop()
	}
}

// Sets is the number of SetRequests the twin committed.
func (t *Twin) Sets() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sets
}

// Gets is the number of GetRequests the twin received (answered or
// refused): a test holds a command to the reads it needs.
func (t *Twin) Gets() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.gets
}

// FailNextSet makes the next Set fail with err (a gRPC status error, e.g.
// status.Error(codes.FailedPrecondition, "commit failed")) and change nothing.
// Calls queue up: each failure is used by one Set.
func (t *Twin) FailNextSet(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failNext = append(t.failNext, err)
}

// RejectNextSet is FailNextSet with a commit-validation failure, the way a
// device rejects a configuration.
func (t *Twin) RejectNextSet() {
	t.FailNextSet(status.Error(codes.InvalidArgument, "twin: commit validation failed (injected)"))
}

// DropNextSet closes the client connection in the middle of the next Set,
// after committing it when commit is true (then the client cannot know the
// outcome) or before touching the datastore otherwise.
func (t *Twin) DropNextSet(commit bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dropNext++
	t.dropApply = commit
}

// HangNextSet makes the next Set block until the client gives up; it
// commits nothing. Other RPCs are served normally.
func (t *Twin) HangNextSet() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.hangSets++
}

// HangNextSetArrived is HangNextSet that also tells when that Set arrived
// (the returned channel is closed then): tests act exactly while the Set
// is under way.
func (t *Twin) HangNextSetArrived() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.hangSets++
	t.hangArrived = make(chan struct{})
	return t.hangArrived
}

// LoseNextSet makes the next Set answer OK without changing anything, like
// a device that acknowledges and then fails to program the change.
func (t *Twin) LoseNextSet() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.loseSets++
}

// CommitLateNextSet makes the next Set commit only d after it arrived, even
// when its client has given up meanwhile (Ctrl-C, deadline, lost
// connection): a device whose commit is already under way when the RPC is
// cancelled. gRPC cancels a handler's context when its client cancels
// (RST_STREAM) but cannot stop a handler that no longer looks at it, and
// the client's call returns at once: the write lands after the client was
// told "canceled". The returned channel is closed when that Set's handler
// has returned (committed, or failed like any other Set).
func (t *Twin) CommitLateNextSet(d time.Duration) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lateBy, t.lateDone = d, make(chan struct{})
	return t.lateDone
}

// SlowNextSet is CommitLateNextSet that also tells when the Set arrived:
// arrived is closed when the twin starts on it (its handler is then
// running, so the client has sent it), done when its handler returned.
// Tests use it to signal a process exactly while its Set is under way.
func (t *Twin) SlowNextSet(d time.Duration) (arrived, done <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lateBy, t.lateDone, t.lateArrived = d, make(chan struct{}), make(chan struct{})
	return t.lateArrived, t.lateDone
}

// SetDelay delays every RPC by d (0 = no delay).
func (t *Twin) SetDelay(d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.delay = d
}

// Hang makes every RPC block until the client gives up (its deadline or
// cancellation), like a wedged management plane.
func (t *Twin) Hang(on bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.hang = on
}

// Put writes v (a JSON-shaped Go value: map[string]any, []any, string,
// json.Number, bool, numbers) at path p, bypassing faults and path checks.
// Tests use it to inject drift and to set counters (e.g. target COUNTERS_DB,
// origin sonic-db, /COUNTERS/Ethernet0/SAI_PORT_STAT_PFC_3_RX_PKTS).
func (t *Twin) Put(p *gnmipb.Path, v any) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	ns := t.namespace(p)
	root := t.tree(ns)
	v = jtree.StripPrefixes(jtree.Clone(normalizeGo(v)))
	if len(p.GetElem()) == 0 {
		m, ok := v.(map[string]any)
		if !ok {
			return errors.New("twin: value at the root must be an object")
		}
		t.data[ns] = m
		return nil
	}
	return jtree.Replace(root, p.GetElem(), v)
}

// Delete removes the node at p, bypassing faults (drift injection).
func (t *Twin) Delete(p *gnmipb.Path) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return jtree.Delete(t.tree(t.namespace(p)), p.GetElem())
}

// Value returns a copy of the node at p, configuration and state (a Get
// of type ALL).
func (t *Twin) Value(p *gnmipb.Path) (any, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ns := t.namespace(p)
	if lines, ok := t.data[ns].([]string); ok {
		return jtree.CLIText(lines), true
	}
	v, ok := t.lookup(ns, p.GetElem(), gnmipb.GetRequest_ALL, nil)
	return jtree.Clone(v), ok
}

// lookup reads the node at elems of namespace ns as a Get of type typ sees
// it (the caller holds t.mu; the result is only read; f, when set, speeds
// up the configuration lookups of a Get of many paths). The gNMI
// specification (3.3.1) defines the types: CONFIG the read-write (config
// true) data, STATE the read-only (config false) data, OPERATIONAL the
// read-only data that is operational state (counters are), ALL both. SR
// Linux keeps config and state apart (its running and state datastores)
// and its state datastore also holds the configuration in effect (`info
// from state` shows both), so on SR Linux STATE and OPERATIONAL read
// configuration and state. EOS and OpenConfig targets answer STATE and
// OPERATIONAL with the state alone. SONiC's state is in other databases
// (targets COUNTERS_DB, STATE_DB), not in CONFIG_DB, so every type reads
// the namespace whole there. Only the node asked for is merged, so a read
// of configuration that has no counters below it copies nothing.
func (t *Twin) lookup(ns string, elems []*gnmipb.PathElem, typ gnmipb.GetRequest_DataType, f *jtree.Finder) (any, bool) {
	var cfg, st map[string]any
	switch {
	case t.opts.Platform == intent.PlatformSONiC || typ == gnmipb.GetRequest_ALL || t.opts.Platform == intent.PlatformSRLinux && typ != gnmipb.GetRequest_CONFIG:
		cfg, st = t.readTree(ns), t.state[ns]
	case typ == gnmipb.GetRequest_CONFIG:
		cfg = t.readTree(ns)
	default:
		st = t.state[ns]
	}
	var cv, sv any
	var okC, okS bool
	if cfg != nil {
		if f != nil {
			cv, okC = f.Get(cfg, elems)
		} else {
			cv, okC = jtree.Get(cfg, elems)
		}
	}
	if len(st) > 0 {
		sv, okS = jtree.Get(st, elems)
	}
	switch {
	case okC && okS:
		return jtree.Merge(jtree.Clone(cv), jtree.Clone(sv)), true
	case okS:
		return sv, true
	}
	return cv, okC
}

// stateTree is the state tree of ns, created when missing.
func (t *Twin) stateTree(ns string) map[string]any {
	if t.state == nil {
		t.state = map[string]map[string]any{}
	}
	m := t.state[ns]
	if m == nil {
		m = map[string]any{}
		t.state[ns] = m
	}
	return m
}

// CLI returns the twin's CLI configuration lines (EOS origin cli).
func (t *Twin) CLI() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines, _ := t.data["cli@"].([]string)
	return slices.Clone(lines)
}

// namespace keys the datastore by origin and target; the twin's own name
// and "" are the same target, "openconfig" and "" the same origin.
func (t *Twin) namespace(p *gnmipb.Path) string {
	origin, target := p.GetOrigin(), p.GetTarget()
	if origin == "openconfig" {
		origin = ""
	}
	if target == t.opts.Name {
		target = ""
	}
	return origin + "@" + target
}

func (t *Twin) tree(ns string) map[string]any {
	m, ok := t.data[ns].(map[string]any)
	if !ok {
		m = map[string]any{}
		t.data[ns] = m
	}
	return m
}

func normalizeGo(v any) any {
	switch x := v.(type) {
	case int:
		return jsonNumber(fmt.Sprint(x))
	case int64:
		return jsonNumber(fmt.Sprint(x))
	case uint64:
		return jsonNumber(fmt.Sprint(x))
	case float64:
		return jsonNumber(fmt.Sprint(x))
	case map[string]any:
		for k, c := range x {
			x[k] = normalizeGo(c)
		}
	case []any:
		for i := range x {
			x[i] = normalizeGo(x[i])
		}
	}
	return v
}

func (t *Twin) checkAuth(ctx context.Context) error {
	if t.opts.Username == "" && t.opts.Password == "" {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	u, p := first(md.Get("username")), first(md.Get("password"))
	okU := subtle.ConstantTimeCompare([]byte(u), []byte(t.opts.Username)) == 1
	okP := subtle.ConstantTimeCompare([]byte(p), []byte(t.opts.Password)) == 1
	if !okU || !okP {
		return status.Error(codes.Unauthenticated, "authentication failed")
	}
	return nil
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func (t *Twin) unaryAuth(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := t.checkAuth(ctx); err != nil {
		return nil, err
	}
	if err := t.stall(ctx); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func (t *Twin) streamAuth(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := t.checkAuth(ss.Context()); err != nil {
		return err
	}
	if err := t.stall(ss.Context()); err != nil {
		return err
	}
	return h(srv, ss)
}

// stall applies the delay and hang faults.
func (t *Twin) stall(ctx context.Context) error {
	t.mu.Lock()
	d, hang := t.delay, t.hang
	t.mu.Unlock()
	if hang {
		<-ctx.Done()
		return status.FromContextError(ctx.Err()).Err()
	}
	if d > 0 {
		tm := time.NewTimer(d)
		defer tm.Stop()
		select {
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		case <-tm.C:
		}
	}
	return nil
}

// trackingListener remembers accepted connections so a fault can drop them.
type trackingListener struct {
	net.Listener
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.conns[c] = struct{}{}
	l.mu.Unlock()
	return &trackedConn{Conn: c, l: l}, nil
}

func (l *trackingListener) dropAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.conns {
		c.Close()
		delete(l.conns, c)
	}
}

type trackedConn struct {
	net.Conn
	l *trackingListener
}

func (c *trackedConn) Close() error {
	c.l.mu.Lock()
	delete(c.l.conns, c.Conn)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// Config returns a copy of the twin's configuration datastore, per
// namespace ("origin@target"): a JSON tree, or (origin cli) the CLI
// configuration's flat lines (jtree.CLILines' form), as a switch would show
// them after every Set so far.
func (t *Twin) Config() map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]any, len(t.data))
	for ns, v := range t.data {
		if lines, ok := v.([]string); ok {
			out[ns] = slices.Clone(lines)
			continue
		}
		out[ns] = jtree.Clone(v)
	}
	return out
}
