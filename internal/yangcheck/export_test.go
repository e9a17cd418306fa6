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
