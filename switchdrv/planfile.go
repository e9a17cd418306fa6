package switchdrv

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/fabricctl/fabricctl/plan"
)

// SamePayload reports whether a saved plan's switch target carries the
// same SetRequest as a freshly rendered one (protobuf equality: the
// protojson bytes of a saved file differ in layout, not in content); the
// error names the switch and what differs, never a value.
func SamePayload(saved, fresh *plan.TargetPlan) error {
	a, err := decodePayload(saved)
	if err != nil {
		return err
	}
	b, err := decodePayload(fresh)
	if err != nil {
		return err
	}
	if proto.Equal(a, b) {
		return nil
	}
	what := "its values"
	switch {
	case len(a.GetDelete()) != len(b.GetDelete()), len(a.GetReplace()) != len(b.GetReplace()), len(a.GetUpdate()) != len(b.GetUpdate()):
		what = "the paths it writes"
	case !proto.Equal(a.GetPrefix(), b.GetPrefix()):
		what = "its prefix"
	default:
		for i := range a.GetReplace() {
			if !proto.Equal(a.GetReplace()[i].GetPath(), b.GetReplace()[i].GetPath()) {
				what = "the paths it writes"
			}
		}
		for i := range a.GetUpdate() {
			if !proto.Equal(a.GetUpdate()[i].GetPath(), b.GetUpdate()[i].GetPath()) {
				what = "the paths it writes"
			}
		}
		for i := range a.GetDelete() {
			if !proto.Equal(a.GetDelete()[i], b.GetDelete()[i]) {
				what = "the paths it writes"
			}
		}
	}
	return fmt.Errorf("switch %s: the plan's SetRequest differs from the intent's in %s", saved.Name, what)
}
