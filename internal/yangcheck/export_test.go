package yangcheck

import (
	"testing"

	gnmipb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabricctl/fabricctl/intent"
)

// Exported for the tests of package yangcheck_test, which compile the
// example fabrics with switchdrv (switchdrv imports yangcheck, so those
// tests cannot live in package yangcheck).

// PlatformSchema is platformSchema.
func PlatformSchema(t testing.TB, p intent.Platform) *Schema { return platformSchema(t, p) }

// RequireYanglint is yanglint: skip without it, fail in CI.
func RequireYanglint(t testing.TB) { yanglint(t) }

// ApplyUpdate is applyUpdate.
func ApplyUpdate(t testing.TB, s *Schema, tree map[string]any, u *gnmipb.Update) {
	applyUpdate(t, s, tree, u)
}

// Referee runs yanglint on the datastore and compares its verdict with ours.
func Referee(t testing.TB, s *Schema, p intent.Platform, origin string, tree map[string]any, feats map[string]bool, ours Violations) (refOK bool, refMsg string, agreed bool, why string) {
	ref := runYanglint(t, s, p, datastoreJSON(t, s, origin, tree), feats)
	agreed, why = agree(ours, ref)
	return ref.ok, ref.msg, agreed, why
}

// RefereeRelease runs yanglint on the datastore over the module texts of
// release (Tree.ReleaseFiles of the embedded tree), with the release's
// feature set feats, and returns its verdict.
func RefereeRelease(t testing.TB, s *Schema, release, origin string, tree map[string]any, feats map[string]bool) (ok bool, msg string) {
	t.Helper()
	tr, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	files, dirs, _, err := tr.ReleaseFiles(release)
	if err != nil {
		t.Fatal(err)
	}
	ref := runYanglintFiles(t, s, files, dirs, datastoreJSON(t, s, origin, tree), feats)
	return ref.ok, ref.msg
}

// RefereeOwn runs yanglint on the datastore over the release's own
// modules, skipping (and saying which folder is missing) when they are not
// at hand; a release whose own modules are shipped is skipped too (the
// check above it already used them).
func RefereeOwn(t *testing.T, release, origin string, tree map[string]any, feats map[string]bool) (ok bool, msg string) {
	t.Helper()
	r, err := LookupRelease(release)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Derived() {
		t.Skipf("release %s: its own modules are the shipped ones", release)
	}
	dir := releaseOwnDir(t, r)
	files, dirs := ownFiles(t, r, dir)
	own := loadFiles(t, files, dirs)
	ref := runYanglintFiles(t, own, files, dirs, datastoreJSON(t, own, origin, tree), feats)
	return ref.ok, ref.msg
}
