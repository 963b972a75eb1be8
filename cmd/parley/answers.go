package main

import (
	"encoding/json"
	"fmt"
	"net/mail"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/parley-mcp/parley/mcp"
)

// loadAnswers reads --answers and --answer once: field name to value.
// Values from --answer are strings, typed later by the form's schema;
// values from the file keep their JSON type.
func (a *app) loadAnswers() (map[string]any, error) {
	a.answersOnce.Do(func() {
		m := map[string]any{}
		if a.opts.answersFile != "" {
			data, err := os.ReadFile(a.opts.answersFile)
			if err == nil {
				err = decodeJSON(data, &m)
			}
			if err != nil {
				a.answersErr = usagef("--answers %s: %v", a.opts.answersFile, err)
				return
			}
		}
		for _, p := range a.opts.answers {
			k, v, _ := strings.Cut(p, "=")
			m[k] = v
		}
		a.answers = m
	})
	return a.answers, a.answersErr
}

// field is one form field, in the order the form shows it.
type field struct {
	name     string
	schema   mcp.PrimitiveSchemaDefinition
	required bool
}

// formFields returns the fields of a form: required ones first, each group
// in name order (a schema's properties have no order once decoded).
func formFields(s *mcp.ElicitRequestedSchema) []field {
	var fs []field
	for name, def := range s.Properties {
		fs = append(fs, field{name: name, schema: def, required: slices.Contains(s.Required, name)})
	}
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].required != fs[j].required {
			return fs[i].required
		}
		return fs[i].name < fs[j].name
	})
	return fs
}

// label is what a field is called on screen.
func (f field) label() string {
	if t := schemaTitle(f.schema); t != "" {
		return t
	}
	return f.name
}

func schemaTitle(s mcp.PrimitiveSchemaDefinition) string {
	switch s := s.(type) {
	case *mcp.StringSchema:
		return s.Title
	case *mcp.NumberSchema:
		return s.Title
	case *mcp.BooleanSchema:
		return s.Title
	case *mcp.UntitledSingleSelectEnumSchema:
		return s.Title
	case *mcp.TitledSingleSelectEnumSchema:
		return s.Title
	case *mcp.UntitledMultiSelectEnumSchema:
		return s.Title
	case *mcp.TitledMultiSelectEnumSchema:
		return s.Title
	case *mcp.LegacyTitledEnumSchema:
		return s.Title
	}
	return ""
}

func schemaDescription(s mcp.PrimitiveSchemaDefinition) string {
	switch s := s.(type) {
	case *mcp.StringSchema:
		return s.Description
	case *mcp.NumberSchema:
		return s.Description
	case *mcp.BooleanSchema:
		return s.Description
	case *mcp.UntitledSingleSelectEnumSchema:
		return s.Description
	case *mcp.TitledSingleSelectEnumSchema:
		return s.Description
	case *mcp.UntitledMultiSelectEnumSchema:
		return s.Description
	case *mcp.TitledMultiSelectEnumSchema:
		return s.Description
	case *mcp.LegacyTitledEnumSchema:
		return s.Description
	}
	return ""
}

// option is one choice of an enum field.
type option struct{ value, title string }

// enumOptions returns an enum field's choices, and whether it takes several.
func enumOptions(s mcp.PrimitiveSchemaDefinition) (opts []option, multi bool, ok bool) {
	plain := func(vs []string) []option {
		out := make([]option, len(vs))
		for i, v := range vs {
			out[i] = option{v, v}
		}
		return out
	}
	titled := func(vs []mcp.EnumOption) []option {
		out := make([]option, len(vs))
		for i, v := range vs {
			out[i] = option{v.Const, v.Title}
			if v.Title == "" {
				out[i].title = v.Const
			}
		}
		return out
	}
	switch s := s.(type) {
	case *mcp.UntitledSingleSelectEnumSchema:
		return plain(s.Enum), false, true
	case *mcp.TitledSingleSelectEnumSchema:
		return titled(s.OneOf), false, true
	case *mcp.LegacyTitledEnumSchema:
		out := plain(s.Enum)
		for i := range out {
			if i < len(s.EnumNames) && s.EnumNames[i] != "" {
				out[i].title = s.EnumNames[i]
			}
		}
		return out, false, true
	case *mcp.UntitledMultiSelectEnumSchema:
		return plain(s.Items.Enum), true, true
	case *mcp.TitledMultiSelectEnumSchema:
		return titled(s.Items.AnyOf), true, true
	}
	return nil, false, false
}

// defaultText is a field's default as the text a form starts with, and
// whether it has one.
func defaultValue(s mcp.PrimitiveSchemaDefinition) (any, bool) {
	switch s := s.(type) {
	case *mcp.StringSchema:
		return s.Default, s.Default != ""
	case *mcp.NumberSchema:
		if s.Default != nil {
			return *s.Default, true
		}
	case *mcp.BooleanSchema:
		if s.Default != nil {
			return *s.Default, true
		}
	case *mcp.UntitledSingleSelectEnumSchema:
		return s.Default, s.Default != ""
	case *mcp.TitledSingleSelectEnumSchema:
		return s.Default, s.Default != ""
	case *mcp.LegacyTitledEnumSchema:
		return s.Default, s.Default != ""
	case *mcp.UntitledMultiSelectEnumSchema:
		return s.Default, s.Default != nil
	case *mcp.TitledMultiSelectEnumSchema:
		return s.Default, s.Default != nil
	}
	return nil, false
}

// convertAnswer turns an answer (a string from --answer, or a JSON value
// from --answers) into the field's type and checks it against the schema.
func convertAnswer(s mcp.PrimitiveSchemaDefinition, v any) (any, error) {
	if opts, multi, ok := enumOptions(s); ok {
		if multi {
			var vals []string
			switch v := v.(type) {
			case string:
				if strings.HasPrefix(v, "[") {
					if err := json.Unmarshal([]byte(v), &vals); err != nil {
						return nil, fmt.Errorf("%q is not a JSON list of strings", v)
					}
				} else if v != "" {
					vals = strings.Split(v, ",")
				}
			case []any:
				for _, e := range v {
					str, ok := e.(string)
					if !ok {
						return nil, fmt.Errorf("%v is not a string", e)
					}
					vals = append(vals, str)
				}
			default:
				return nil, fmt.Errorf("%v is not a list", v)
			}
			for i, val := range vals {
				val = strings.TrimSpace(val)
				vals[i] = val
				if err := checkChoice(opts, val); err != nil {
					return nil, err
				}
			}
			if vals == nil {
				vals = []string{}
			}
			return vals, checkItems(s, len(vals))
		}
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%v is not a string", v)
		}
		return str, checkChoice(opts, str)
	}
	switch s := s.(type) {
	case *mcp.StringSchema:
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%v is not a string", v)
		}
		return str, checkString(s, str)
	case *mcp.NumberSchema:
		var text string
		switch v := v.(type) {
		case string:
			text = strings.TrimSpace(v)
		case json.Number:
			text = v.String()
		case float64:
			text = strconv.FormatFloat(v, 'g', -1, 64)
		default:
			return nil, fmt.Errorf("%v is not a number", v)
		}
		return checkNumber(s, text)
	case *mcp.BooleanSchema:
		switch v := v.(type) {
		case bool:
			return v, nil
		case string:
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return nil, fmt.Errorf("%q is not true or false", v)
			}
			return b, nil
		}
		return nil, fmt.Errorf("%v is not true or false", v)
	}
	return nil, fmt.Errorf("unknown field kind %T", s)
}

func checkChoice(opts []option, v string) error {
	var names []string
	for _, o := range opts {
		if o.value == v {
			return nil
		}
		names = append(names, o.value)
	}
	return fmt.Errorf("%q is not one of %s", v, strings.Join(names, ", "))
}

func checkItems(s mcp.PrimitiveSchemaDefinition, n int) error {
	var lo, hi *int
	switch s := s.(type) {
	case *mcp.UntitledMultiSelectEnumSchema:
		lo, hi = s.MinItems, s.MaxItems
	case *mcp.TitledMultiSelectEnumSchema:
		lo, hi = s.MinItems, s.MaxItems
	}
	if lo != nil && n < *lo {
		return fmt.Errorf("choose at least %d", *lo)
	}
	if hi != nil && n > *hi {
		return fmt.Errorf("choose at most %d", *hi)
	}
	return nil
}

// checkString applies a string field's length and format.
func checkString(s *mcp.StringSchema, v string) error {
	n := len([]rune(v))
	if s.MinLength != nil && n < *s.MinLength {
		return fmt.Errorf("at least %d characters", *s.MinLength)
	}
	if s.MaxLength != nil && n > *s.MaxLength {
		return fmt.Errorf("at most %d characters", *s.MaxLength)
	}
	if v == "" {
		return nil
	}
	switch s.Format {
	case mcp.FormatEmail:
		if a, err := mail.ParseAddress(v); err != nil || a.Address != v {
			return fmt.Errorf("%q is not an email address", v)
		}
	case mcp.FormatURI:
		if u, err := url.Parse(v); err != nil || u.Scheme == "" {
			return fmt.Errorf("%q is not a URI (like https://example.com)", v)
		}
	case mcp.FormatDate:
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			return fmt.Errorf("%q is not a date (YYYY-MM-DD)", v)
		}
	case mcp.FormatDateTime:
		if _, err := time.Parse(time.RFC3339, v); err != nil {
			return fmt.Errorf("%q is not a date-time (like 2026-07-28T09:00:00Z)", v)
		}
	}
	return nil
}

// checkNumber parses a number field's text and applies its type and bounds.
func checkNumber(s *mcp.NumberSchema, text string) (any, error) {
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return nil, fmt.Errorf("%q is not a number", text)
	}
	if s.Type == mcp.TypeInteger && f != float64(int64(f)) {
		return nil, fmt.Errorf("%q is not a whole number", text)
	}
	if s.Minimum != nil && f < *s.Minimum {
		return nil, fmt.Errorf("at least %s", formatNumber(*s.Minimum))
	}
	if s.Maximum != nil && f > *s.Maximum {
		return nil, fmt.Errorf("at most %s", formatNumber(*s.Maximum))
	}
	if s.Type == mcp.TypeInteger {
		return int64(f), nil
	}
	return f, nil
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// fillForm answers a form from answers alone: the content, and the
// required fields it has no value for. A given answer that does not fit
// its field is an error.
func fillForm(fields []field, answers map[string]any) (map[string]any, []field, error) {
	content := map[string]any{}
	var missing []field
	for _, f := range fields {
		v, given := answers[f.name]
		if !given {
			if d, ok := defaultValue(f.schema); ok {
				content[f.name] = d
				continue
			}
			if f.required {
				missing = append(missing, f)
			}
			continue
		}
		cv, err := convertAnswer(f.schema, v)
		if err != nil {
			return nil, nil, usagef("answer for %s: %v", f.name, err)
		}
		content[f.name] = cv
	}
	return content, missing, nil
}
