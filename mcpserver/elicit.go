package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/parley-mcp/parley/mcp"
)

// ElicitQuestion asks the person at the host to fill in a form, whose
// fields are those of the struct T. Make one with [Elicit].
type ElicitQuestion[T any] struct {
	q        *question
	schema   mcp.ElicitRequestedSchema
	resolved *validator
}

// Elicitation is the whole outcome of an elicitation: what the user did,
// and, when they accepted, what they entered.
type Elicitation[T any] struct {
	// Action is accept, decline or cancel.
	Action mcp.ElicitAction
	// Content holds the form's values when Action is accept; the zero
	// value otherwise.
	Content T
}

// Accepted reports whether the user accepted the form.
func (e Elicitation[T]) Accepted() bool { return e.Action == mcp.ActionAccept }

// Elicit declares a form-mode elicitation under key. The form has one
// field per exported field of T, a struct of strings, numbers, integers
// and booleans, named by their json tags, described by their jsonschema
// tags and constrained by their mcp tags (title and default on any field;
// on strings, either an enum (with optional enumTitle) or minLength,
// maxLength and a format of date, date-time, email or uri; minimum and
// maximum on numbers); fields without omitempty are required. A form's default is
// the value the client shows first, so a required field may have one; an
// answer without an optional field is not given its default. message renders
// the text shown with the form from the call's arguments (of type In, the
// registration's argument type) and the answers of the questions in after.
//
//	var region = mcpserver.Elicit[Region]("region", func(a ProvisionArgs, _ *mcpserver.Call) string {
//		return "Which region should " + a.Name + " live in?"
//	})
//
// Build the message from the arguments and earlier answers only. Each
// answer is pinned to the question as it was shown: a message that
// renders differently every round (a timestamp, a live price) never
// matches its answer, and the question is asked again until the client's
// round limit ends the call.
//
// By default a decline or cancel ends the call with an error naming the
// question; see [ElicitQuestion.AllowDecline]. A problem with T is
// reported when the question is registered.
func Elicit[T, In any](key string, message func(in In, c *Call) string, after ...Dependency) *ElicitQuestion[T] {
	e := &ElicitQuestion[T]{q: newQuestion(key, mcp.MethodElicit, after)}
	e.q.inType = inTypeOf[In]()
	if message == nil && e.q.err == nil {
		e.q.err = fmt.Errorf("question %q has no message", key)
	}
	if e.q.err == nil {
		e.schema, e.q.err = formSchema(reflect.TypeFor[T]())
	}
	if e.q.err == nil {
		e.resolved, e.q.err = resolveForm(e.schema)
	}
	if e.q.err != nil {
		e.q.err = fmt.Errorf("question %q: %w", key, e.q.err)
	}
	e.q.render = func(in any, c *Call) (mcp.InputRequest, error) {
		return mcp.NewElicitFormRequest(message(in.(In), c), e.schema), nil
	}
	e.q.consume = e.consume
	e.q.restore = e.restore
	return e
}

// AllowDecline lets the body run when the user declines or cancels the
// form; it reads the whole outcome with [ElicitQuestion.Outcome]. It
// returns e, for use where e is declared.
func (e *ElicitQuestion[T]) AllowDecline() *ElicitQuestion[T] {
	e.q.allowDecline = true
	return e
}

// WithSchema replaces the form schema inferred from T with s, for what
// struct tags cannot say, such as a multi-select of a []string field.
// Every property of s must be a field of T. It returns e, for use where e is
// declared; a mismatch is reported when the question is registered.
func (e *ElicitQuestion[T]) WithSchema(s mcp.ElicitRequestedSchema) *ElicitQuestion[T] {
	if e.q.err != nil {
		return e
	}
	inferred := e.schema
	for name := range s.Properties {
		if _, ok := inferred.Properties[name]; !ok {
			e.q.err = fmt.Errorf("question %q: the schema's property %q is not a field of %s", e.q.key, name, reflect.TypeFor[T]())
			return e
		}
	}
	e.schema = s
	if e.resolved, e.q.err = resolveForm(s); e.q.err != nil {
		e.q.err = fmt.Errorf("question %q: %w", e.q.key, e.q.err)
	}
	return e
}

// Key returns the question's key in inputRequests.
func (e *ElicitQuestion[T]) Key() string { return e.q.key }

func (e *ElicitQuestion[T]) base() *question { return e.q }

// Get returns what the user entered. In a body, every declared question is
// answered; with AllowDecline, Get returns the zero T when the user
// declined or cancelled (see Outcome). Reading a question the
// registration does not declare ends the call with an answer naming it
// (see [Dependency]), never a zero T.
func (e *ElicitQuestion[T]) Get(c *Call) T {
	v, _ := answerOf(c, e.q).value.(T)
	return v
}

// Outcome returns the whole outcome: the user's action and, if accepted,
// the content.
func (e *ElicitQuestion[T]) Outcome(c *Call) Elicitation[T] {
	a := answerOf(c, e.q)
	v, _ := a.value.(T)
	return Elicitation[T]{Action: a.action, Content: v}
}

// consume checks a fresh answer, an elicitation result whose accepted
// content matches the schema, and decodes the content into T once.
func (e *ElicitQuestion[T]) consume(raw json.RawMessage) (*record, *answer, error) {
	r, err := mcp.InputResponses{e.q.key: raw}.Elicit(e.q.key)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrWrongKind, err)
	}
	if r.Action != mcp.ActionAccept {
		return &record{Action: r.Action}, &answer{action: r.Action}, nil
	}
	if r.Content == nil {
		return nil, nil, ErrNoContent
	}
	if err := e.resolved.Validate(map[string]any(r.Content)); err != nil {
		return nil, nil, fmt.Errorf("%w (%s)", ErrSchemaMismatch, trimValidation(err))
	}
	data, err := json.Marshal(r.Content)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrSchemaMismatch, err)
	}
	var v T
	if err := jsonv2.Unmarshal(data, &v); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrSchemaMismatch, cleanDecodeError(err))
	}
	return &record{Action: mcp.ActionAccept, Data: data}, &answer{action: mcp.ActionAccept, value: v}, nil
}

// restore decodes a record. Recorded content is checked against the live
// schema again: a record from before a schema change does not fit and the
// question is asked again.
func (e *ElicitQuestion[T]) restore(r *record) (*answer, bool) {
	switch r.Action {
	case mcp.ActionDecline, mcp.ActionCancel:
		return &answer{action: r.Action}, len(r.Data) == 0
	case mcp.ActionAccept:
	default:
		return nil, false
	}
	var content map[string]any
	if err := jsonv2.Unmarshal(r.Data, &content); err != nil || content == nil {
		return nil, false
	}
	if err := e.resolved.Validate(content); err != nil {
		return nil, false
	}
	var v T
	if err := jsonv2.Unmarshal(r.Data, &v); err != nil {
		return nil, false
	}
	return &answer{action: mcp.ActionAccept, value: v}, true
}

// formSchema infers the form of an elicitation from the struct t: one
// primitive property per field, with what the field's mcp tag says within
// what an elicitation form can carry (the protocol's restricted schema):
// title and default on every field; minLength, maxLength and format
// (date, date-time, email or uri) on strings; minimum and maximum on
// numbers; enum, with or without enumTitle, on strings.
func formSchema(t reflect.Type) (mcp.ElicitRequestedSchema, error) {
	var form mcp.ElicitRequestedSchema
	if t.Kind() != reflect.Struct {
		return form, fmt.Errorf("the form type %s is not a struct", t)
	}
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		return form, fmt.Errorf("cannot infer a form from %s: %w", t, err)
	}
	for _, f := range reflect.VisibleFields(t) {
		name, ok := jsonFieldName(f)
		tag, tagged := f.Tag.Lookup("mcp")
		if !ok || !tagged || s.Properties[name] == nil {
			continue
		}
		r, err := parseRules(tag)
		if err == nil {
			err = formRules(r)
		}
		if err == nil {
			err = applyRules(s.Properties[name], r, ruleSite{top: true, required: slices.Contains(s.Required, name), form: true})
		}
		if err != nil {
			return form, fieldTagError(t, f, err)
		}
	}
	form.Properties = make(map[string]mcp.PrimitiveSchemaDefinition, len(s.Properties))
	for name, p := range s.Properties {
		def, err := formField(p)
		if err != nil {
			return form, fmt.Errorf("field %q of %s %w", name, t, err)
		}
		form.Properties[name] = def
	}
	form.Required = slices.Clone(s.Required)
	return form, nil
}

// formRules refuses what an elicitation form cannot carry.
func formRules(r *fieldRules) error {
	switch {
	case r.pattern != "":
		return errors.New("an elicitation form's string fields carry no pattern: the protocol's form schema has none")
	case len(r.enum) > 0 && (r.minLength != nil || r.maxLength != nil || r.format != ""):
		// The form's enum schemas have no such members: the client would
		// not show them, and the answer is checked against the form sent.
		return errors.New("an elicitation form's enum fields carry no minLength, maxLength or format: the protocol's enum schemas have none")
	case r.format != "" && !slices.Contains([]mcp.StringFormat{mcp.FormatDate, mcp.FormatDateTime, mcp.FormatEmail, mcp.FormatURI}, mcp.StringFormat(r.format)):
		return fmt.Errorf("format %q: an elicitation form's formats are date, date-time, email and uri", r.format)
	}
	return nil
}

// formField turns one property schema, inferred and amended by the mcp
// tag, into the form field that says the same.
func formField(p *jsonschema.Schema) (mcp.PrimitiveSchemaDefinition, error) {
	var def json.RawMessage = p.Default
	switch p.Type {
	case "string":
		var d string
		if def != nil {
			_ = json.Unmarshal(def, &d) // written by applyRules from a string
		}
		switch {
		case len(p.OneOf) > 0:
			options := make([]mcp.EnumOption, len(p.OneOf))
			for i, o := range p.OneOf {
				options[i] = mcp.EnumOption{Const: (*o.Const).(string), Title: o.Title}
			}
			return &mcp.TitledSingleSelectEnumSchema{Title: p.Title, Description: p.Description, OneOf: options, Default: d}, nil
		case len(p.Enum) > 0:
			values := make([]string, len(p.Enum))
			for i, v := range p.Enum {
				values[i] = v.(string)
			}
			return &mcp.UntitledSingleSelectEnumSchema{Title: p.Title, Description: p.Description, Enum: values, Default: d}, nil
		}
		return &mcp.StringSchema{Title: p.Title, Description: p.Description, MinLength: p.MinLength, MaxLength: p.MaxLength,
			Format: mcp.StringFormat(p.Format), Default: d}, nil
	case "integer", "number":
		if len(p.Enum) > 0 {
			return nil, errors.New("has an enum: an elicitation form's enums are of strings")
		}
		n := &mcp.NumberSchema{Type: mcp.NumberType(p.Type), Title: p.Title, Description: p.Description, Minimum: p.Minimum, Maximum: p.Maximum}
		if def != nil {
			var d float64
			_ = json.Unmarshal(def, &d)
			n.Default = &d
		}
		return n, nil
	case "boolean":
		if len(p.Enum) > 0 {
			return nil, errors.New("has an enum: an elicitation form's enums are of strings")
		}
		b := &mcp.BooleanSchema{Title: p.Title, Description: p.Description}
		if def != nil {
			var d bool
			_ = json.Unmarshal(def, &d)
			b.Default = &d
		}
		return b, nil
	}
	return nil, errors.New("is not a string, number, integer or boolean: an elicitation form holds only those")
}

// resolveForm compiles a form schema for checking answers against it.
func resolveForm(form mcp.ElicitRequestedSchema) (*validator, error) {
	raw, err := json.Marshal(form)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, err
	}
	return newValidator(r), nil
}
