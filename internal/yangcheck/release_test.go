package yangcheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricctl/fabricctl/internal/profile"
)

// EnvReleaseDir names a directory laid out like the steering repository's
// shared/yang (one folder per release, Release.Dir) that holds the
// releases' own modules for the referee tests; the default is
// ../shared/yang beside the repository.
const EnvReleaseDir = "FABRICCTL_RELEASE_YANG"

// releaseOwnDir returns the folder of r's own modules, or skips saying
// exactly which folder is missing.
func releaseOwnDir(t *testing.T, r *Release) string {
	t.Helper()
	root := os.Getenv(EnvReleaseDir)
	if root == "" {
		root = filepath.Join("..", "..", "..", "shared", "yang")
	}
	dir, err := filepath.Abs(filepath.Join(root, r.Dir))
	if err != nil {
		t.Fatal(err)
	}
	if ms, _ := filepath.Glob(filepath.Join(dir, "*.yang")); len(ms) == 0 {
		t.Skipf("release %s: its own modules (%s) are not in %s: the steering repository's shared/yang/%s would hold them ($%s names another root)",
			r.Name, r.Source, dir, r.Dir, EnvReleaseDir)
	}
	return dir
}

// ownFiles reads the modules of a release's own folder (and the other
// folders of its platform from the shipped tree) as ReleaseFiles returns
// them.
func ownFiles(t *testing.T, r *Release, dir string) (map[string]string, []string) {
	t.Helper()
	dirs, err := PlatformDirs(r.Platform)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	fs, _ := filepath.Glob(filepath.Join(dir, "*.yang"))
	for _, f := range fs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		files[r.Dir+"/"+filepath.Base(f)] = string(b)
	}
	tr, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs[1:] {
		for _, f := range tr.yangFiles(d) {
			files[f] = string(tr.files[f])
		}
	}
	return files, append([]string{r.Dir}, dirs[1:]...)
}

func releaseSchema(t testing.TB, name string) *Schema {
	t.Helper()
	s, err := ReleaseSchema(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// profileFeatures is prof's feature set over the features s declares.
func profileFeatures(s *Schema, prof *profile.Profile) map[string]bool {
	if prof.Features.Module == "" {
		return nil
	}
	m := map[string]bool{}
	for _, n := range s.Features(prof.Features.Module) {
		m[prof.Features.Module+":"+n] = prof.FeatureOn(n)
	}
	return m
}

// TestReleasesDerive: every release loads from the shipped modules (each
// edit of a derived one applies), every profile names one of its
// platform, and a derived release's absent features are features its base
// declares.
func TestReleasesDerive(t *testing.T) {
	for _, r := range Releases() {
		s := releaseSchema(t, r.Name)
		if s.Release() != r.Name {
			t.Errorf("%s: schema says release %q", r.Name, s.Release())
		}
		for _, f := range r.AbsentFeatures {
			mod, name, _ := strings.Cut(f, ":")
			found := false
			for _, n := range s.Features(mod) {
				found = found || n == name
			}
			if !found {
				t.Errorf("%s: absent feature %s is not declared by the base's %s", r.Name, f, mod)
			}
		}
		if r.Derived() && (len(r.Covers) == 0 || r.Verified == "") {
			t.Errorf("%s: a derived release names what it covers and how it was verified", r.Name)
		}
	}
	for _, p := range profile.All() {
		r, err := LookupRelease(p.YANG.Release)
		if err != nil {
			t.Errorf("profile %s: %v", p.Name, err)
			continue
		}
		if string(r.Platform) != p.Platform {
			t.Errorf("profile %s (%s) names release %s of platform %s", p.Name, p.Platform, r.Name, r.Platform)
		}
	}
	if _, err := LookupRelease("srlinux-23.10.1"); err == nil || !strings.Contains(err.Error(), "never against another release's") {
		t.Errorf("an unknown release: %v", err)
	}
}

// TestProfileFeaturesDeclared: a profile's feature list names only
// features its release declares (the 24.10 profile named three that only
// 25.3 declares: mda, qos-pfc-headroom-buffer, qos-pfc-peak-buffer).
func TestProfileFeaturesDeclared(t *testing.T) {
	for _, p := range profile.All() {
		if p.Features.Module == "" {
			continue
		}
		s := releaseSchema(t, p.YANG.Release)
		declared := map[string]bool{}
		for _, n := range s.Features(p.Features.Module) {
			declared[n] = !s.FeatureAbsent(p.Features.Module + ":" + n)
		}
		for _, f := range p.Features.List {
			if !declared[f.Name] {
				t.Errorf("profile %s lists feature %s, which release %s does not declare", p.Name, f.Name, p.YANG.Release)
			}
		}
	}
}

// TestReleaseMatchesItsModules: a derived release schema is the release's
// own in every config node below what it covers, under the feature set of
// each profile that names it (goyang, schemaDiff). It runs where the
// release's own modules are at hand ($FABRICCTL_RELEASE_YANG or
// ../shared/yang/<release dir>) and says which folder is missing when not.
func TestReleaseMatchesItsModules(t *testing.T) {
	for _, r := range Releases() {
		if !r.Derived() {
			continue
		}
		t.Run(r.Name, func(t *testing.T) {
			dir := releaseOwnDir(t, r)
			files, dirs := ownFiles(t, r, dir)
			own := loadFiles(t, files, dirs)
			derived := releaseSchema(t, r.Name)
			n := 0
			for _, p := range profile.All() {
				if p.YANG.Release != r.Name {
					continue
				}
				n++
				feats := profileFeatures(own, p)
				for k, v := range profileFeatures(derived, p) {
					if _, ok := feats[k]; !ok && feats != nil {
						feats[k] = v
					}
				}
				for _, d := range schemaDiff(derived, own, feats, r.Covers...) {
					t.Errorf("profile %s: derived -> own: %s", p.Name, d)
				}
			}
			if n == 0 {
				t.Errorf("no profile names release %s", r.Name)
			}
		})
	}
}

// loadFiles processes module texts (folder/file) into a Schema.
func loadFiles(t *testing.T, files map[string]string, dirs []string) *Schema {
	t.Helper()
	tr := &Tree{name: "test", files: map[string][]byte{}}
	for f, text := range files {
		tr.files[f] = []byte(text)
	}
	ms, err := tr.parse(dirs)
	if err != nil {
		t.Fatal(err)
	}
	return newSchema(ms)
}

// releaseMutation is one datastore (RFC 7951 text) validated under one
// release, and what the release's device says.
type releaseMutation struct {
	name, release string
	origin        string // "" or OriginSONiCDB (CONFIG_DB, mapped as sonic-yang-mgmt does)
	text          string
	rule, msgHas  string // "" = accepted
	// lint replaces [0] with [1] in the sonic-yang JSON yanglint reads:
	// a field the schema does not have, which the CONFIG_DB mapping
	// would leave out.
	lint [2]string
}

// sonicMutated is sonicBaseDS with from replaced by to.
func sonicMutated(from, to string) string {
	if !strings.Contains(sonicBaseDS, from) {
		panic("sonicBaseDS has no " + from)
	}
	return strings.Replace(sonicBaseDS, from, to, 1)
}

// srlPFCMapping is srlBase with the pfc-queue pfc3 and a pfc-mapping-profile
// whose two lists carry the PFC priority as JSON prio (3 or [3]), the
// paused queues' priorities given as second.
func srlPFCMapping(prio, second string) string {
	pause := `{"queue-name": "unicast-3", "pfc-pause-frame-priority": ` + prio + `, "enable-pfc": true}`
	if second != "" {
		pause += `, {"queue-name": "multicast-3", "pfc-pause-frame-priority": ` + second + `, "enable-pfc": true}`
	}
	return strings.Replace(srlBase, `"classifiers":`, `"pfc-mapping-profile": [{"name": "P",
    "received-traffic": {"unicast-mapping": {"pfc-queue": [{"pfc-queue-name": "pfc3", "forwarding-class": ["fc3"], "pfc-pause-frame-priority": `+prio+`}]}},
    "received-pfc-pause-frames": {"queue": [`+pause+`]}}],
  "classifiers":`, 1)
}

func srlWithPFCQueue(text string) string {
	return strings.Replace(text, `{"name": "multicast-3", "queue-index": 3}]`, `{"name": "multicast-3", "queue-index": 3}], "pfc-queue": [{"pfc-queue-name": "pfc3", "queue-index": 3}]`, 1)
}

// srlSubinterfacePFC is srlBase with pfc {pfc-enable false} on the QoS
// binding of subinterface ethernet-1/1.0.
var srlSubinterfacePFC = strings.Replace(srlBase, `"pfc": {"pfc-enable": true}}]}`, `"pfc": {"pfc-enable": true}},
    {"interface-id": "ethernet-1/1.0", "interface-ref": {"interface": "ethernet-1/1", "subinterface": 0}, "pfc": {"pfc-enable": false}}]}`, 1)

var (
	// sonicPoll2000 polls the watchdog every 2 s (detection and
	// restoration no shorter, as sonic-pfcwd's musts want).
	sonicPoll2000 = strings.NewReplacer(`"POLL_INTERVAL": "200"`, `"POLL_INTERVAL": "2000"`,
		`"detection_time": "200"`, `"detection_time": "2000"`, `"restoration_time": "200"`, `"restoration_time": "2000"`).Replace(sonicBaseDS)
	sonicStatHistory = sonicMutated(`"restoration_time": "200"`, `"restoration_time": "200", "pfc_stat_history": "enable"`)
	statHistoryLint  = [2]string{`"restoration_time": 200`, `"restoration_time": 200, "pfc_stat_history": "enable"`}
)

func releaseMutations() []releaseMutation {
	const r2410, r253 = "srlinux-24.10.3", "srlinux-25.3.1"
	return []releaseMutation{
		{name: "pfc-priority-leaf-list", release: r2410, text: srlWithPFCQueue(srlPFCMapping("[3]", ""))},
		{name: "pfc-priority-bare-number", release: r2410, text: srlWithPFCQueue(srlPFCMapping("3", "")), rule: RuleSchema},
		{name: "pfc-priority-leaf-list", release: r253, text: srlWithPFCQueue(srlPFCMapping("[3]", "")), rule: RuleSchema},
		{name: "pfc-priority-bare-number", release: r253, text: srlWithPFCQueue(srlPFCMapping("3", ""))},
		{name: "pause-priority-twice", release: r2410, text: srlWithPFCQueue(srlPFCMapping("[3]", "[3]"))},
		{name: "pause-priority-twice", release: r253, text: srlWithPFCQueue(srlPFCMapping("3", "3")), rule: RuleSchema, msgHas: `unique "pfc-pause-frame-priority"`},
		{name: "pfc-on-subinterface", release: r2410, text: srlSubinterfacePFC, rule: RuleMust, msgHas: "Attachment of pfc, not permitted for sub-interfaces"},
		{name: "pfc-on-subinterface", release: r253, text: srlSubinterfacePFC},

		// PFC_WD GLOBAL POLL_INTERVAL: 100..3000 ms up to 202505, 100..1000
		// from 202511 (sonic-buildimage PR #25034).
		{name: "poll-interval-2000", release: "sonic-202405", origin: OriginSONiCDB, text: sonicPoll2000},
		{name: "poll-interval-2000", release: "sonic-202505", origin: OriginSONiCDB, text: sonicPoll2000},
		{name: "poll-interval-2000", release: "sonic-202511", origin: OriginSONiCDB, text: sonicPoll2000, rule: RuleSchema, msgHas: "out of range 100..1000"},
		// pfc_stat_history: 202511 and master only (PR #21848).
		{name: "pfc-stat-history", release: "sonic-202411", origin: OriginSONiCDB, text: sonicStatHistory, lint: statHistoryLint, rule: RuleSchema, msgHas: "pfc_stat_history"},
		{name: "pfc-stat-history", release: "sonic-202505", origin: OriginSONiCDB, text: sonicStatHistory, lint: statHistoryLint, rule: RuleSchema, msgHas: "pfc_stat_history"},
		{name: "pfc-stat-history", release: "sonic-202511", origin: OriginSONiCDB, text: sonicStatHistory, lint: statHistoryLint},
		// PORT_QOS_MAP pfc_enable "" (PFC off on every priority): refused
		// by 202405 and 202411's pattern, taken from 202505 on.
		{name: "pfc-enable-empty", release: "sonic-202411", origin: OriginSONiCDB, text: sonicMutated(`"pfc_enable": "3"`, `"pfc_enable": ""`), rule: RuleSchema},
		{name: "pfc-enable-empty", release: "sonic-202505", origin: OriginSONiCDB, text: sonicMutated(`"pfc_enable": "3"`, `"pfc_enable": ""`)},
		// TC_TO_QUEUE_MAP queue index 8 and 9: 202405 takes 0-7 only.
		{name: "tc-to-queue-8", release: "sonic-202405", origin: OriginSONiCDB, text: sonicMutated(`"DSCP_TO_TC_MAP"`, `"TC_TO_QUEUE_MAP": {"Q": {"3": "8"}}, "DSCP_TO_TC_MAP"`), rule: RuleSchema},
		{name: "tc-to-queue-8", release: "sonic-202411", origin: OriginSONiCDB, text: sonicMutated(`"DSCP_TO_TC_MAP"`, `"TC_TO_QUEUE_MAP": {"Q": {"3": "8"}}, "DSCP_TO_TC_MAP"`)},
	}
}

// TestReleaseMutationsAgreeWithYanglint: each release validates the
// datastores where releases differ the way the release does: the
// validator (what the twins run) names the rule, libyang's yanglint agrees
// over the release's module texts (derived ones as ReleaseFiles makes
// them), and, where the release's own modules are at hand, yanglint gives
// the same verdict over them.
func TestReleaseMutationsAgreeWithYanglint(t *testing.T) {
	yanglint(t)
	tr, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range releaseMutations() {
		t.Run(m.release+"/"+m.name, func(t *testing.T) {
			r, err := LookupRelease(m.release)
			if err != nil {
				t.Fatal(err)
			}
			var tree map[string]any
			dec := json.NewDecoder(strings.NewReader(m.text))
			dec.UseNumber()
			if err := dec.Decode(&tree); err != nil {
				t.Fatal(err)
			}
			s := releaseSchema(t, m.release)
			ours := s.ValidateDatastore(m.origin, tree, DatastoreOptions{})
			if m.rule == "" && len(ours) > 0 {
				t.Errorf("want accepted, got %v", ours)
			}
			if m.rule != "" {
				found := false
				for _, v := range ours {
					found = found || (v.Rule == m.rule && strings.Contains(v.Msg, m.msgHas))
				}
				if !found {
					t.Errorf("want a %s violation (%q), got %v", m.rule, m.msgHas, ours)
				}
			}
			files, dirs, _, err := tr.ReleaseFiles(m.release)
			if err != nil {
				t.Fatal(err)
			}
			data := lintData(t, s, m, tree)
			ref := runYanglintFiles(t, s, files, dirs, data, nil)
			if ok, why := agree(ours, ref); !ok {
				t.Errorf("validator and yanglint over the %s modules disagree: %s", m.release, why)
			}
			if !r.Derived() {
				return
			}
			t.Run("own-modules", func(t *testing.T) {
				dir := releaseOwnDir(t, r)
				files, dirs := ownFiles(t, r, dir)
				own := loadFiles(t, files, dirs)
				ref := runYanglintFiles(t, own, files, dirs, lintData(t, own, m, tree), nil)
				if ref.ok != (len(ours) == 0) {
					t.Errorf("yanglint over the release's own modules: ok=%v (%s); the derived schema: %v", ref.ok, ref.msg, ours)
				}
			})
		})
	}
}

// lintData is the JSON yanglint validates for m under schema s.
func lintData(t *testing.T, s *Schema, m releaseMutation, tree map[string]any) []byte {
	t.Helper()
	if m.origin == "" {
		return []byte(m.text)
	}
	data := datastoreJSON(t, s, m.origin, tree)
	added := strings.TrimPrefix(m.lint[1], m.lint[0])
	if name, _, _ := strings.Cut(strings.TrimLeft(added, ", "), ":"); m.lint[0] != "" && !strings.Contains(string(data), name) {
		if !strings.Contains(string(data), m.lint[0]) {
			t.Fatalf("the sonic-yang JSON has no %s: %s", m.lint[0], data)
		}
		data = []byte(strings.Replace(string(data), m.lint[0], m.lint[1], 1))
	}
	return data
}
