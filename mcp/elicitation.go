package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Elicitation lets a server ask the client's user for input: a small form
// (form mode) or a visit to a URL (URL mode, for anything that must not
// pass through the client, such as credentials or payment). Under
// 2026-07-28 the request travels inside an InputRequiredResult and the
// answer comes back in inputResponses.

// ElicitMode is an elicitation mode.
type ElicitMode string

// The elicitation modes.
const (
	// ElicitModeForm asks for structured input described by a flat schema.
	ElicitModeForm ElicitMode = "form"
	// ElicitModeURL asks the user to open a URL.
	ElicitModeURL ElicitMode = "url"
)

// ErrUnknownElicitMode is matched by the error for elicitation params whose
// mode is neither form nor url.
var ErrUnknownElicitMode = errors.New("mcp: unknown elicitation mode")

// ElicitRequest asks the client to elicit input from its user
// (elicitation/create). Under 2026-07-28 it is embedded in [InputRequests]:
// it has no jsonrpc or id member.
type ElicitRequest struct {
	// Params are *ElicitRequestFormParams or *ElicitRequestURLParams.
	Params ElicitRequestParams
}

// NewElicitFormRequest returns a form-mode elicitation.
func NewElicitFormRequest(message string, schema ElicitRequestedSchema) *ElicitRequest {
	return &ElicitRequest{Params: &ElicitRequestFormParams{Message: message, RequestedSchema: schema}}
}

// NewElicitURLRequest returns a URL-mode elicitation.
func NewElicitURLRequest(message, url string) *ElicitRequest {
	return &ElicitRequest{Params: &ElicitRequestURLParams{Message: message, URL: url}}
}

// Method returns "elicitation/create".
func (*ElicitRequest) Method() string { return MethodElicit }

// Mode returns the request's mode (form when Params is nil).
func (r *ElicitRequest) Mode() ElicitMode {
	if r.Params == nil {
		return ElicitModeForm
	}
	return r.Params.ElicitationMode()
}

// ElicitRequestParams are the params of an elicitation:
// *ElicitRequestFormParams or *ElicitRequestURLParams. The interface is
// sealed.
type ElicitRequestParams interface {
	// ElicitationMode returns the params' mode.
	ElicitationMode() ElicitMode
	isElicitParams()
}

// ElicitRequestFormParams ask for structured input through a form.
//
//mcp:json
type ElicitRequestFormParams struct {
	// Mode is "form" or empty (which also means form); it is kept as sent.
	Mode ElicitMode `json:"mode,omitempty"`
	// Message tells the user what is asked and why.
	Message string `json:"message"`
	// RequestedSchema describes the form: a flat object of primitive fields.
	RequestedSchema ElicitRequestedSchema `json:"requestedSchema"`
	// Meta is the params' _meta (legacy sessions only).
	Meta MetaObject `json:"_meta,omitempty"`
}

// ElicitationMode returns ElicitModeForm.
func (*ElicitRequestFormParams) ElicitationMode() ElicitMode { return ElicitModeForm }
func (*ElicitRequestFormParams) isElicitParams()             {}

// ElicitRequestURLParams ask the user to open a URL.
//
//mcp:json const=mode:url
type ElicitRequestURLParams struct {
	// Message tells the user why the URL should be opened.
	Message string `json:"message"`
	// URL is the page to open.
	URL string `json:"url"`
	// ElicitationID correlates the elicitation on legacy (2025-11-25)
	// sessions, where it is required; 2026-07-28 has no such field (the
	// server keeps correlation in requestState).
	ElicitationID string `json:"elicitationId,omitempty"`
	// Meta is the params' _meta (legacy sessions only).
	Meta MetaObject `json:"_meta,omitempty"`
}

// ElicitationMode returns ElicitModeURL.
func (*ElicitRequestURLParams) ElicitationMode() ElicitMode { return ElicitModeURL }
func (*ElicitRequestURLParams) isElicitParams()             {}

// ElicitRequestedSchema is the schema of an elicitation form: an object
// whose properties are primitive fields. It writes its own "type":"object".
//
//mcp:json type=object nonnil=Properties
type ElicitRequestedSchema struct {
	// Schema is the optional $schema dialect URI.
	Schema string `json:"$schema,omitempty"`
	// Properties are the form's fields. A nil map is written as {}.
	Properties map[string]PrimitiveSchemaDefinition `json:"properties"`
	// Required lists the fields that must be filled.
	Required []string `json:"required,omitempty"`
}

// ElicitAction is the user's response to an elicitation.
type ElicitAction string

// The elicitation actions.
const (
	// ActionAccept: the user submitted the form or consented to open the URL.
	ActionAccept ElicitAction = "accept"
	// ActionDecline: the user explicitly declined.
	ActionDecline ElicitAction = "decline"
	// ActionCancel: the user dismissed the request without choosing.
	ActionCancel ElicitAction = "cancel"
)

// Valid reports whether a is one of the three actions.
func (a ElicitAction) Valid() bool {
	return a == ActionAccept || a == ActionDecline || a == ActionCancel
}

// ElicitResult is the client's answer to an elicitation. Under 2026-07-28 it
// travels in inputResponses and is not a Result (it has no resultType).
type ElicitResult struct {
	// Action is what the user did.
	Action ElicitAction `json:"action"`
	// Content is the submitted form, only for accept in form mode. Values
	// are strings, numbers (float64 when decoded), booleans or lists of
	// strings.
	Content map[string]any `json:"content,omitempty"`
	// Meta is the result's _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

// Accepted reports whether the user accepted.
func (r *ElicitResult) Accepted() bool { return r != nil && r.Action == ActionAccept }

// DecodeContent decodes the submitted form into v (a struct or a map).
func (r *ElicitResult) DecodeContent(v any) error {
	b, err := json.Marshal(r.Content)
	if err != nil {
		return err
	}
	if isNullJSON(b) {
		b = []byte("{}")
	}
	return json.Unmarshal(b, v)
}

// validate checks the shape of an elicitation answer: a known action and
// form values of the allowed kinds.
func (r *ElicitResult) validate() error {
	if !r.Action.Valid() {
		return fmt.Errorf("action %q is not accept, decline or cancel", r.Action)
	}
	for k, v := range r.Content {
		switch v := v.(type) {
		case string, float64, json.Number, bool, int, int64:
		case []any:
			for _, e := range v {
				if _, ok := e.(string); !ok {
					return fmt.Errorf("content %q: a list may hold only strings", k)
				}
			}
		case []string:
		default:
			return fmt.Errorf("content %q: %T is not a string, number, boolean or list of strings", k, v)
		}
	}
	return nil
}

// ErrUnknownSchemaType is matched by the error for an elicitation field
// schema that is none of the primitive kinds.
var ErrUnknownSchemaType = errors.New("mcp: unknown primitive schema type")

// PrimitiveSchemaDefinition is the schema of one elicitation form field:
// *StringSchema, *NumberSchema, *BooleanSchema, or one of the enum schemas
// (see [EnumSchema]). The interface is sealed; the types write their own
// "type" member (except NumberSchema, whose Type says number or integer).
// Decode one with [DecodePrimitiveSchemaDefinition].
type PrimitiveSchemaDefinition interface {
	isPrimitiveSchema()
}

// EnumSchema is a field whose value is picked from a list: a
// [SingleSelectEnumSchema], a [MultiSelectEnumSchema] or a
// *LegacyTitledEnumSchema.
type EnumSchema interface {
	PrimitiveSchemaDefinition
	isEnumSchema()
}

// SingleSelectEnumSchema picks one value: *UntitledSingleSelectEnumSchema
// or *TitledSingleSelectEnumSchema.
type SingleSelectEnumSchema interface {
	EnumSchema
	isSingleSelect()
}

// MultiSelectEnumSchema picks several values: *UntitledMultiSelectEnumSchema
// or *TitledMultiSelectEnumSchema.
type MultiSelectEnumSchema interface {
	EnumSchema
	isMultiSelect()
}

// StringFormat is a format a string field may require.
type StringFormat string

// The string formats.
const (
	FormatEmail    StringFormat = "email"
	FormatURI      StringFormat = "uri"
	FormatDate     StringFormat = "date"
	FormatDateTime StringFormat = "date-time"
)

// StringSchema is a free-text field.
//
//mcp:json type=string unknown=ErrUnknownSchemaType
type StringSchema struct {
	// Title is the field's label.
	Title string `json:"title,omitempty"`
	// Description explains the field.
	Description string `json:"description,omitempty"`
	// MinLength bounds the length from below, when set.
	MinLength *int `json:"minLength,omitempty"`
	// MaxLength bounds the length from above, when set.
	MaxLength *int `json:"maxLength,omitempty"`
	// Format requires a format, when set.
	Format StringFormat `json:"format,omitempty"`
	// Default is the initial value, when not empty.
	Default string `json:"default,omitempty"`
}

// NumberType says whether a number field takes any number or integers only.
type NumberType string

// The number types.
const (
	TypeNumber  NumberType = "number"
	TypeInteger NumberType = "integer"
)

// NumberSchema is a numeric field.
//
//mcp:json default=Type:TypeNumber
type NumberSchema struct {
	// Type is number or integer; empty is written as number.
	Type NumberType `json:"type"`
	// Title is the field's label.
	Title string `json:"title,omitempty"`
	// Description explains the field.
	Description string `json:"description,omitempty"`
	// Minimum bounds the value from below, when set.
	Minimum *float64 `json:"minimum,omitempty"`
	// Maximum bounds the value from above, when set.
	Maximum *float64 `json:"maximum,omitempty"`
	// Default is the initial value, when set.
	Default *float64 `json:"default,omitempty"`
}

// BooleanSchema is a yes/no field.
//
//mcp:json type=boolean unknown=ErrUnknownSchemaType
type BooleanSchema struct {
	// Title is the field's label.
	Title string `json:"title,omitempty"`
	// Description explains the field.
	Description string `json:"description,omitempty"`
	// Default is the initial value, when set.
	Default *bool `json:"default,omitempty"`
}

// EnumOption is one choice of a titled enum: the value and its label.
//
//mcp:json
type EnumOption struct {
	// Const is the value sent back.
	Const string `json:"const"`
	// Title is the label shown.
	Title string `json:"title"`
}

// UntitledSingleSelectEnumSchema picks one of Enum, shown as is.
//
//mcp:json type=string nonnil=Enum unknown=ErrUnknownSchemaType
type UntitledSingleSelectEnumSchema struct {
	Title       string   `json:"title,omitempty"`       // the field's label
	Description string   `json:"description,omitempty"` // explains the field
	Enum        []string `json:"enum"`                  // the values to pick from
	Default     string   `json:"default,omitempty"`     // the initial value, when set
}

// TitledSingleSelectEnumSchema picks one of OneOf, shown by title.
//
//mcp:json type=string nonnil=OneOf unknown=ErrUnknownSchemaType
type TitledSingleSelectEnumSchema struct {
	Title       string       `json:"title,omitempty"`       // the field's label
	Description string       `json:"description,omitempty"` // explains the field
	OneOf       []EnumOption `json:"oneOf"`                 // the values to pick from, with labels
	Default     string       `json:"default,omitempty"`     // the initial value, when set
}

// UntitledEnumItems are the items of an untitled multi-select: strings from
// Enum. They write their own "type":"string".
//
//mcp:json type=string nonnil=Enum unknown=ErrUnknownSchemaType
type UntitledEnumItems struct {
	Enum []string `json:"enum"` // the values to pick from
}

// TitledEnumItems are the items of a titled multi-select.
//
//mcp:json nonnil=AnyOf
type TitledEnumItems struct {
	AnyOf []EnumOption `json:"anyOf"` // the values to pick from, with labels
}

// UntitledMultiSelectEnumSchema picks several of Items.Enum, shown as is.
//
//mcp:json type=array unknown=ErrUnknownSchemaType
type UntitledMultiSelectEnumSchema struct {
	Title       string            `json:"title,omitempty"`       // the field's label
	Description string            `json:"description,omitempty"` // explains the field
	MinItems    *int              `json:"minItems,omitempty"`    // the fewest values to pick, when set
	MaxItems    *int              `json:"maxItems,omitempty"`    // the most values to pick, when set
	Items       UntitledEnumItems `json:"items"`                 // the values to pick from
	Default     []string          `json:"default,omitempty"`     // the initial value, when set
}

// TitledMultiSelectEnumSchema picks several of Items.AnyOf, shown by title.
//
//mcp:json type=array unknown=ErrUnknownSchemaType
type TitledMultiSelectEnumSchema struct {
	Title       string          `json:"title,omitempty"`       // the field's label
	Description string          `json:"description,omitempty"` // explains the field
	MinItems    *int            `json:"minItems,omitempty"`    // the fewest values to pick, when set
	MaxItems    *int            `json:"maxItems,omitempty"`    // the most values to pick, when set
	Items       TitledEnumItems `json:"items"`                 // the values to pick from
	Default     []string        `json:"default,omitempty"`     // the initial value, when set
}

// LegacyTitledEnumSchema is the deprecated titled single-select: labels in
// EnumNames, parallel to Enum. Use TitledSingleSelectEnumSchema instead.
//
//mcp:json type=string nonnil=Enum unknown=ErrUnknownSchemaType
type LegacyTitledEnumSchema struct {
	Title       string   `json:"title,omitempty"`       // the field's label
	Description string   `json:"description,omitempty"` // explains the field
	Enum        []string `json:"enum"`                  // the values to pick from
	EnumNames   []string `json:"enumNames,omitempty"`   // the labels, parallel to Enum
	Default     string   `json:"default,omitempty"`     // the initial value, when set
}

func (*StringSchema) isPrimitiveSchema()                   {}
func (*NumberSchema) isPrimitiveSchema()                   {}
func (*BooleanSchema) isPrimitiveSchema()                  {}
func (*UntitledSingleSelectEnumSchema) isPrimitiveSchema() {}
func (*TitledSingleSelectEnumSchema) isPrimitiveSchema()   {}
func (*UntitledMultiSelectEnumSchema) isPrimitiveSchema()  {}
func (*TitledMultiSelectEnumSchema) isPrimitiveSchema()    {}
func (*LegacyTitledEnumSchema) isPrimitiveSchema()         {}

func (*UntitledSingleSelectEnumSchema) isEnumSchema() {}
func (*TitledSingleSelectEnumSchema) isEnumSchema()   {}
func (*UntitledMultiSelectEnumSchema) isEnumSchema()  {}
func (*TitledMultiSelectEnumSchema) isEnumSchema()    {}
func (*LegacyTitledEnumSchema) isEnumSchema()         {}

func (*UntitledSingleSelectEnumSchema) isSingleSelect() {}
func (*TitledSingleSelectEnumSchema) isSingleSelect()   {}
func (*UntitledMultiSelectEnumSchema) isMultiSelect()   {}
func (*TitledMultiSelectEnumSchema) isMultiSelect()     {}
