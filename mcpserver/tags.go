package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// The `mcp` struct tag says what a field accepts beyond its type: the
// schema constraints users ask for most, which jsonschema-go's inference
// does not read (its `jsonschema` tag is a description only, and it
// refuses one that starts with "WORD=", keeping that syntax for itself).
// Design record 016 says why the tag is Parley's own.
//
//	type Args struct {
//		Units string  `json:"units" mcp:"enum=celsius,enum=fahrenheit"`
//		Days  int     `json:"days,omitempty" mcp:"minimum=1,maximum=14,default=3"`
//		City  string  `json:"city" mcp:"minLength=1,maxLength=80,pattern='^[^0-9]+$'"`
//		Mail  string  `json:"mail,omitempty" mcp:"format=email,title=E-mail"`
//	}
//
// The tag is a comma-separated list of keyword=value items. A value that
// holds a comma, or starts or ends with a space, is written between
// single quotes; a quote inside quotes is doubled ('it''s'). Keywords:
//
//   - enum=V: one allowed value (repeat it for each); enumTitle=T labels
//     the enum value of the same position (give one for every value or
//     none; strings only);
//   - default=V: the value an absent member takes (top-level fields
//     without required only);
//   - minimum=N, maximum=N: bounds of a number or integer, inclusive;
//   - minLength=N, maxLength=N: bounds of a string's length, in Unicode
//     code points;
//   - pattern=RE: a Go regular expression (RE2 syntax) the string must
//     match somewhere: anchor it with ^ and $ to match the whole string;
//   - format=F: the string's format (date, date-time, email, uri, ...),
//     an annotation for the client and the model: JSON Schema does not
//     assert it, and neither does the server (add a pattern to enforce
//     one);
//   - title=T: a short label (a form field's, a prompt argument's);
//   - allow=slash|backslash|dots|control: lets a resource template
//     variable hold what it refuses by default (see AddResourceTemplate).
//
// Values of enum and default are read as the field's JSON type: a string
// as written, a number or integer in Go syntax, a boolean as true or
// false. A tag that does not fit its field (an unknown keyword, a bound on
// a string, a default outside the enum) is a registration error.

// fieldRules is what one field's `mcp` tag says.
type fieldRules struct {
	title                string
	enum                 []string // as written; typed by the field
	enumTitles           []string
	def                  *string
	minimum, maximum     *float64
	minLength, maxLength *int
	pattern              string
	format               string
	allow                allowSet
}

// allowSet is what a template variable may hold beyond the safe default.
type allowSet uint8

const (
	allowSlash     allowSet = 1 << iota // '/'
	allowBackslash                      // '\'
	allowDots                           // "." and ".." segments
	allowControl                        // control characters, NUL among them
)

var allowNames = map[string]allowSet{
	"slash": allowSlash, "backslash": allowBackslash, "dots": allowDots, "control": allowControl,
}

// tagKeywords lists the keywords, for the error naming an unknown one.
const tagKeywords = "enum, enumTitle, default, minimum, maximum, minLength, maxLength, pattern, format, title, allow"

// parseRules reads an `mcp` tag.
func parseRules(tag string) (*fieldRules, error) {
	r := &fieldRules{}
	seen := map[string]bool{}
	rest := tag
	for rest != "" {
		var key, val string
		var err error
		key, val, rest, err = nextTagItem(rest)
		if err != nil {
			return nil, err
		}
		switch key {
		case "enum", "enumTitle", "allow":
		default:
			if seen[key] {
				return nil, fmt.Errorf("%s is given twice", key)
			}
		}
		seen[key] = true
		switch key {
		case "enum":
			r.enum = append(r.enum, val)
		case "enumTitle":
			r.enumTitles = append(r.enumTitles, val)
		case "default":
			r.def = &val
		case "minimum", "maximum":
			f, err := strconv.ParseFloat(val, 64)
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, fmt.Errorf("%s=%s is not a number", key, val)
			}
			if key == "minimum" {
				r.minimum = &f
			} else {
				r.maximum = &f
			}
		case "minLength", "maxLength":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%s=%s is not a length (a whole number, 0 or more)", key, val)
			}
			if key == "minLength" {
				r.minLength = &n
			} else {
				r.maxLength = &n
			}
		case "pattern":
			if _, err := regexp.Compile(val); err != nil {
				return nil, fmt.Errorf("pattern %q is not a Go regular expression: %v", val, err)
			}
			r.pattern = val
		case "format":
			r.format = val
		case "title":
			r.title = val
		case "allow":
			a, ok := allowNames[val]
			if !ok {
				return nil, fmt.Errorf("allow=%s: want slash, backslash, dots or control", val)
			}
			r.allow |= a
		default:
			return nil, fmt.Errorf("unknown keyword %q (known: %s)", key, tagKeywords)
		}
	}
	switch {
	case len(r.enumTitles) > 0 && len(r.enumTitles) != len(r.enum):
		return nil, fmt.Errorf("%d enumTitle for %d enum values: give one for each value, or none", len(r.enumTitles), len(r.enum))
	case r.minimum != nil && r.maximum != nil && *r.minimum > *r.maximum:
		return nil, fmt.Errorf("minimum %v is above maximum %v", *r.minimum, *r.maximum)
	case r.minLength != nil && r.maxLength != nil && *r.minLength > *r.maxLength:
		return nil, fmt.Errorf("minLength %d is above maxLength %d", *r.minLength, *r.maxLength)
	}
	for i, v := range r.enum {
		if slices.Contains(r.enum[:i], v) {
			return nil, fmt.Errorf("enum value %q is given twice", v)
		}
	}
	return r, nil
}

// nextTagItem splits the first keyword=value item off s.
func nextTagItem(s string) (key, val, rest string, err error) {
	eq := strings.IndexByte(s, '=')
	comma := strings.IndexByte(s, ',')
	if eq < 0 || (comma >= 0 && comma < eq) {
		item, _, _ := strings.Cut(s, ",")
		return "", "", "", fmt.Errorf("%q is not keyword=value", strings.TrimSpace(item))
	}
	key = strings.TrimSpace(s[:eq])
	s = strings.TrimLeft(s[eq+1:], " ")
	if strings.HasPrefix(s, "'") {
		var b strings.Builder
		i := 1
		for {
			j := strings.IndexByte(s[i:], '\'')
			if j < 0 {
				return "", "", "", fmt.Errorf("%s: the quoted value is not closed", key)
			}
			b.WriteString(s[i : i+j])
			i += j + 1
			if i < len(s) && s[i] == '\'' { // '' is a quote
				b.WriteByte('\'')
				i++
				continue
			}
			break
		}
		after := strings.TrimLeft(s[i:], " ")
		if after != "" && after[0] != ',' {
			return "", "", "", fmt.Errorf("%s: a quoted value must be followed by a comma or the end", key)
		}
		return key, b.String(), strings.TrimPrefix(after, ","), nil
	}
	val, rest, _ = strings.Cut(s, ",")
	val = strings.TrimSpace(val)
	if val == "" {
		return "", "", "", fmt.Errorf("%s has no value (write '' for an empty string)", key)
	}
	return key, val, rest, nil
}

// baseType returns the JSON type a property of s holds besides null, and
// whether it may be null; "" when it is not one primitive type.
func baseType(s *jsonschema.Schema) (typ string, nullable bool) {
	if s.Type != "" {
		return s.Type, false
	}
	var other []string
	for _, t := range s.Types {
		if t == "null" {
			nullable = true
		} else {
			other = append(other, t)
		}
	}
	if len(other) != 1 {
		return "", nullable
	}
	return other[0], nullable
}

// typedValue reads text, an enum or default value, as a JSON value of the
// type typ.
func typedValue(typ, text string) (any, error) {
	switch typ {
	case "string":
		return text, nil
	case "boolean":
		switch text {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not true or false", text)
	case "integer", "number":
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("%q is not a number", text)
		}
		if typ == "integer" && f != math.Trunc(f) {
			return nil, fmt.Errorf("%q is not an integer", text)
		}
		return f, nil
	}
	return nil, fmt.Errorf("the field holds %s values, not strings, numbers or booleans", typ)
}

// ruleSite says where a field's rules apply.
type ruleSite struct {
	// top: the field is a member of the arguments (or of a form)
	// themselves, where an absent member can take a default.
	top bool
	// required: the member must be present.
	required bool
	// form: the field is an elicitation form's, where a default is the
	// form's initial value and so makes sense on a required field too.
	form bool
}

// applyRules amends the property schema ps of a field with its rules.
func applyRules(ps *jsonschema.Schema, r *fieldRules, at ruleSite) error {
	if r.allow != 0 {
		return errors.New("allow applies to resource template variables only")
	}
	typ, nullable := baseType(ps)
	need := func(kw string, types ...string) error {
		if !slices.Contains(types, typ) {
			what := typ
			if what == "" {
				what = "a value of several types"
			}
			return fmt.Errorf("%s applies to %s, and the field holds %s", kw, strings.Join(types, " or "), what)
		}
		return nil
	}
	if r.title != "" {
		ps.Title = r.title
	}
	if len(r.enum) > 0 {
		if err := need("enum", "string", "integer", "number", "boolean"); err != nil {
			return err
		}
		values := make([]any, 0, len(r.enum)+1)
		for _, text := range r.enum {
			v, err := typedValue(typ, text)
			if err != nil {
				return fmt.Errorf("enum: %w", err)
			}
			values = append(values, v)
		}
		if len(r.enumTitles) > 0 {
			if err := need("enumTitle", "string"); err != nil {
				return err
			}
			for i, v := range values {
				c := any(v)
				ps.OneOf = append(ps.OneOf, &jsonschema.Schema{Const: &c, Title: r.enumTitles[i]})
			}
			if nullable {
				ps.OneOf = append(ps.OneOf, &jsonschema.Schema{Type: "null"})
			}
		} else {
			if nullable {
				// A pointer field may be null: the enum does not take that
				// away.
				values = append(values, nil)
			}
			ps.Enum = values
		}
	}
	if r.minimum != nil || r.maximum != nil {
		if err := need("minimum and maximum", "integer", "number"); err != nil {
			return err
		}
		// jsonschema-go bounds sized integers by their Go range; a tag
		// narrows that range and may not widen it.
		if r.minimum != nil {
			if ps.Minimum != nil && *r.minimum < *ps.Minimum {
				return fmt.Errorf("minimum %v is below %v, the least the field's Go type holds", *r.minimum, *ps.Minimum)
			}
			ps.Minimum = r.minimum
		}
		if r.maximum != nil {
			if ps.Maximum != nil && *r.maximum > *ps.Maximum {
				return fmt.Errorf("maximum %v is above %v, the most the field's Go type holds", *r.maximum, *ps.Maximum)
			}
			ps.Maximum = r.maximum
		}
		if ps.Minimum != nil && ps.Maximum != nil && *ps.Minimum > *ps.Maximum {
			return fmt.Errorf("minimum %v is above maximum %v", *ps.Minimum, *ps.Maximum)
		}
	}
	if r.minLength != nil || r.maxLength != nil || r.pattern != "" || r.format != "" {
		kw := "minLength, maxLength, pattern and format"
		if err := need(kw, "string"); err != nil {
			return err
		}
		ps.MinLength, ps.MaxLength, ps.Pattern, ps.Format = r.minLength, r.maxLength, r.pattern, r.format
	}
	if r.def != nil {
		if !at.top {
			return errors.New("default applies to the top-level members of a tool's or prompt's arguments and to form fields only: " +
				"elsewhere it would never be applied")
		}
		if at.required && !at.form {
			return errors.New("a required field has no use for a default: add omitempty to its json tag, so that it may be absent")
		}
		v, err := typedValue(typ, *r.def)
		if err != nil {
			return fmt.Errorf("default: %w", err)
		}
		if err := checkDefault(ps, v); err != nil {
			return err
		}
		ps.Default, _ = json.Marshal(v)
	}
	return nil
}

// checkDefault refuses a default the property's own schema refuses (one
// outside the enum, below the minimum, not matching the pattern).
func checkDefault(ps *jsonschema.Schema, v any) error {
	r, err := ps.CloneSchemas().Resolve(nil)
	if err != nil {
		return err
	}
	if err := r.Validate(v); err != nil {
		return fmt.Errorf("default %v does not fit the field: %s", v, trimValidation(err))
	}
	return nil
}

// fieldTagError names the field a tag belongs to.
func fieldTagError(t reflect.Type, f reflect.StructField, err error) error {
	return fmt.Errorf("the mcp tag of field %s of %s: %w", f.Name, t, err)
}

// applyTags amends s, the schema jsonschema-go inferred from t, with the
// `mcp` tags of t's fields and of the structs t holds (through pointers,
// slices, arrays and maps). top is true for a tool's arguments type
// itself, whose members can take defaults. It walks the fields exactly as
// jsonschema-go's inference does: visible fields, embedded structs
// flattened, named by their json tags, the last of two fields with one
// name winning.
func applyTags(t reflect.Type, s *jsonschema.Schema, top bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return applyTags(t.Elem(), s.Items, false)
	case reflect.Map:
		return applyTags(t.Elem(), s.AdditionalProperties, false)
	case reflect.Struct:
	default:
		return nil
	}
	if s.Properties == nil {
		// A struct with a schema of its own (time.Time is a string).
		return nil
	}
	fields := reflect.VisibleFields(t)
	last := map[string]int{}
	for i, f := range fields {
		if name, ok := jsonFieldName(f); ok {
			last[name] = i
		}
	}
	for i, f := range fields {
		name, ok := jsonFieldName(f)
		if !ok || last[name] != i {
			continue
		}
		ps := s.Properties[name]
		if ps == nil {
			continue
		}
		if tag, ok := f.Tag.Lookup("mcp"); ok {
			r, err := parseRules(tag)
			if err == nil {
				err = applyRules(ps, r, ruleSite{top: top, required: slices.Contains(s.Required, name)})
			}
			if err != nil {
				return fieldTagError(t, f, err)
			}
		}
		if err := applyTags(f.Type, ps, false); err != nil {
			return err
		}
	}
	return nil
}

// jsonFieldName names a struct field's property as jsonschema-go does; ok
// is false for a field that has none (unexported, json:"-", or an
// embedded struct, whose fields are visible on their own).
func jsonFieldName(f reflect.StructField) (string, bool) {
	if f.Anonymous || !f.IsExported() {
		return "", false
	}
	tag, ok := f.Tag.Lookup("json")
	if !ok {
		return f.Name, true
	}
	name, _, found := strings.Cut(tag, ",")
	if name == "-" && !found {
		return "", false
	}
	if name == "" {
		name = f.Name
	}
	return name, true
}
