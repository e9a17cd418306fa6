package yangcheck

import "sort"

// Features returns the names of the features module declares (nil when the
// schema does not have the module), sorted. A device's feature set for
// DatastoreOptions.Features is built from them (internal/profile holds
// which are on per release profile).
func (s *Schema) Features(module string) []string {
	m, ok := s.ms.Modules[module]
	if !ok {
		return nil
	}
	out := make([]string, 0, len(m.Feature))
	for _, f := range m.Feature {
		out = append(out, f.Name)
	}
	sort.Strings(out)
	return out
}
