package mcp

import "slices"

// Defaults returns the default value of every field of the form that has
// one, by field name: what a client pre-fills the form with (SEP-1034),
// and what it may accept the form with when its user does not change
// anything. Fields without a default are absent. The values have the Go
// types an accepted ElicitResult's Content holds: string, float64, bool
// and []string.
func (s *ElicitRequestedSchema) Defaults() map[string]any {
	out := make(map[string]any)
	for name, p := range s.Properties {
		var v any
		switch f := p.(type) {
		case *StringSchema:
			if f.Default != "" {
				v = f.Default
			}
		case *NumberSchema:
			if f.Default != nil {
				v = *f.Default
			}
		case *BooleanSchema:
			if f.Default != nil {
				v = *f.Default
			}
		case *UntitledSingleSelectEnumSchema:
			if f.Default != "" {
				v = f.Default
			}
		case *TitledSingleSelectEnumSchema:
			if f.Default != "" {
				v = f.Default
			}
		case *LegacyTitledEnumSchema:
			if f.Default != "" {
				v = f.Default
			}
		case *UntitledMultiSelectEnumSchema:
			if f.Default != nil {
				v = slices.Clone(f.Default)
			}
		case *TitledMultiSelectEnumSchema:
			if f.Default != nil {
				v = slices.Clone(f.Default)
			}
		}
		if v != nil {
			out[name] = v
		}
	}
	return out
}
