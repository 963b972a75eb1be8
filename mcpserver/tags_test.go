package mcpserver_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

// The mcp struct tag: schema constraints inferred into the advertised
// schema and checked before the body runs (design record 016).

type forecastArgs struct {
	Units string   `json:"units" jsonschema:"temperature units" mcp:"enum=celsius,enum=fahrenheit"`
	Days  int      `json:"days,omitempty" mcp:"minimum=1,maximum=14,default=3"`
	City  string   `json:"city" mcp:"minLength=2,maxLength=20,pattern='^[A-Z][a-z]+( [A-Z][a-z]+){0,2}$',title=City"`
	Mail  string   `json:"mail,omitempty" mcp:"format=email"`
	Level *float64 `json:"level,omitempty" mcp:"enum=0.5,enum=1"`
	Where place    `json:"where,omitempty"`
	Note  string   `json:"note,omitempty" mcp:"default='it''s, fine'"`
}

type place struct {
	Zone string `json:"zone" mcp:"enum=north,enum=south"`
	Tiny int8   `json:"tiny,omitempty" mcp:"maximum=9"`
}

func addForecast(t *testing.T, s *mcpserver.Server) *counter {
	t.Helper()
	runs := new(counter)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "forecast"}, func(ctx context.Context, c *mcpserver.Call, a forecastArgs) (string, error) {
		runs.add("body")
		level := "none"
		if a.Level != nil {
			level = fmt.Sprint(*a.Level)
		}
		return fmt.Sprintf("%s %d %s %q level=%s zone=%q note=%q", a.Units, a.Days, a.City, a.Mail, level, a.Where.Zone, a.Note), nil
	}))
	return runs
}

func TestToolTagsInferred(t *testing.T) {
	s, _ := newServer(t, nil)
	addForecast(t, s)
	sess := connect(t, s, nil)
	list, err := sess.ListTools(context.Background(), "")
	mustOK(t, err)
	wantJSON(t, "inputSchema", list.Tools[0].InputSchema, `{
		"type": "object",
		"properties": {
			"units": {"type": "string", "description": "temperature units", "enum": ["celsius", "fahrenheit"]},
			"days": {"type": "integer", "minimum": 1, "maximum": 14, "default": 3},
			"city": {"type": "string", "title": "City", "minLength": 2, "maxLength": 20, "pattern": "^[A-Z][a-z]+( [A-Z][a-z]+){0,2}$"},
			"mail": {"type": "string", "format": "email"},
			"level": {"type": ["null", "number"], "enum": [0.5, 1, null]},
			"where": {
				"type": "object",
				"properties": {
					"zone": {"type": "string", "enum": ["north", "south"]},
					"tiny": {"type": "integer", "minimum": -128, "maximum": 9}
				},
				"required": ["zone"],
				"additionalProperties": false
			},
			"note": {"type": "string", "default": "it's, fine"}
		},
		"required": ["units", "city"],
		"additionalProperties": false
	}`)
}

// Every rule is checked before the body runs, and a failing value gets an
// isError result naming the member and the rule.
func TestToolTagsValidated(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	runs := addForecast(t, s)
	sess := connect(t, s, nil)
	const ok = `"units":"celsius","city":"Oslo"`
	for _, tc := range []struct{ args, want string }{
		{`{"units":"kelvin","city":"Oslo"}`, `validating /properties/units: enum: kelvin does not equal any of: [celsius fahrenheit]`},
		{`{` + ok + `,"days":0}`, `validating /properties/days: minimum: 0 is less than 1`},
		{`{` + ok + `,"days":15}`, `validating /properties/days: maximum: 15 is greater than 14`},
		{`{"units":"celsius","city":"O"}`, `validating /properties/city: minLength: "O" contains 1 Unicode code points, fewer than 2`},
		{`{"units":"celsius","city":"Oslo Oslo Oslo Oslo Oslo"}`, `validating /properties/city: maxLength: "Oslo Oslo Oslo Oslo Oslo" contains 24 Unicode code points, more than 20`},
		{`{"units":"celsius","city":"oslo"}`, `validating /properties/city: pattern: "oslo" does not match regular expression "^[A-Z][a-z]+( [A-Z][a-z]+){0,2}$"`},
		{`{` + ok + `,"level":0.75}`, `validating /properties/level: enum: 0.75 does not equal any of: [0.5 1 <nil>]`},
		{`{` + ok + `,"where":{"zone":"east"}}`, `validating /properties/where: validating /properties/where/properties/zone: enum: east does not equal any of: [north south]`},
		{`{` + ok + `,"where":{"zone":"north","tiny":10}}`, `validating /properties/where: validating /properties/where/properties/tiny: maximum: 10 is greater than 9`},
		// An escaped string takes the full path, with the same verdict.
		{`{"units":"kelvi\u006e","city":"Oslo"}`, `validating /properties/units: enum: kelvin does not equal any of: [celsius fahrenheit]`},
	} {
		res := callRaw(t, ctx, sess.CallToolRound, "forecast", tc.args)
		wantText(t, res, true, `Tool "forecast": invalid arguments: `+tc.want)
	}
	if n := runs.get("body"); n != 0 {
		t.Fatalf("the body ran %d times on arguments that break their rules", n)
	}
	// Absent members take their defaults; present ones keep their values,
	// zero included; format is not asserted.
	for args, want := range map[string]string{
		`{` + ok + `}`: `celsius 3 Oslo "" level=none zone="" note="it's, fine"`,
		`{"units":"fahrenheit","city":"Le Mans","days":14,"mail":"not an address","level":null,"note":""}`: `fahrenheit 14 Le Mans "not an address" level=none zone="" note=""`,
		`{"units":"celsius","city":"Ny Alesund","level":1,"where":{"zone":"south"}}`:                       `celsius 3 Ny Alesund "" level=1 zone="south" note="it's, fine"`,
		`{"units":"cel\u0073ius","city":"Oslo","days":1}`:                                                  `celsius 1 Oslo "" level=none zone="" note="it's, fine"`,
	} {
		res := callRaw(t, ctx, sess.CallToolRound, "forecast", args)
		wantText(t, res, false, want)
	}
}

type twoTagged struct {
	A string `json:"a" mcp:"enum=x"`
}

func TestToolTagRegistrationErrors(t *testing.T) {
	s, _ := newServer(t, nil)
	type unknown struct {
		A string `json:"a" mcp:"colour=red"`
	}
	type boundOnString struct {
		A string `json:"a" mcp:"minimum=1"`
	}
	type lengthOnNumber struct {
		A int `json:"a" mcp:"maxLength=1"`
	}
	type defaultRequired struct {
		A int `json:"a" mcp:"default=1"`
	}
	type defaultOutsideEnum struct {
		A string `json:"a,omitempty" mcp:"enum=x,enum=y,default=z"`
	}
	type defaultBelowMinimum struct {
		A int `json:"a,omitempty" mcp:"minimum=2,default=1"`
	}
	type enumWrongType struct {
		A int `json:"a" mcp:"enum=one"`
	}
	type enumNotInteger struct {
		A int `json:"a" mcp:"enum=1.5"`
	}
	type minAboveMax struct {
		A int `json:"a" mcp:"minimum=3,maximum=2"`
	}
	type belowGoRange struct {
		A uint8 `json:"a" mcp:"minimum=-1"`
	}
	type badPattern struct {
		A string `json:"a" mcp:"pattern=(unclosed"`
	}
	type nestedDefault struct {
		B struct {
			A int `json:"a,omitempty" mcp:"default=1"`
		} `json:"b"`
	}
	type titleCount struct {
		A string `json:"a" mcp:"enum=x,enum=y,enumTitle=X"`
	}
	type allowOnTool struct {
		A string `json:"a" mcp:"allow=slash"`
	}
	type notKeyValue struct {
		A string `json:"a" mcp:"enum"`
	}
	type unclosedQuote struct {
		A string `json:"a" mcp:"pattern='abc"`
	}
	type givenTwice struct {
		A int `json:"a" mcp:"minimum=1,minimum=2"`
	}
	type enumTwice struct {
		A string `json:"a" mcp:"enum=x,enum=x"`
	}
	type negativeLength struct {
		A string `json:"a" mcp:"minLength=-1"`
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"unknown keyword", register[unknown](s), `unknown keyword "colour"`},
		{"bound on a string", register[boundOnString](s), "minimum and maximum applies to integer or number, and the field holds string"},
		{"length on a number", register[lengthOnNumber](s), "minLength, maxLength, pattern and format applies to string, and the field holds integer"},
		{"default on a required field", register[defaultRequired](s), "a required field has no use for a default: add omitempty"},
		{"default outside the enum", register[defaultOutsideEnum](s), "default z does not fit the field: enum: z does not equal any of: [x y]"},
		{"default below the minimum", register[defaultBelowMinimum](s), "default 1 does not fit the field: minimum: 1 is less than 2"},
		{"enum of the wrong type", register[enumWrongType](s), `enum: "one" is not a number`},
		{"enum not an integer", register[enumNotInteger](s), `enum: "1.5" is not an integer`},
		{"minimum above maximum", register[minAboveMax](s), "minimum 3 is above maximum 2"},
		{"below the Go type's range", register[belowGoRange](s), "minimum -1 is below 0, the least the field's Go type holds"},
		{"bad pattern", register[badPattern](s), `pattern "(unclosed" is not a Go regular expression`},
		{"nested default", register[nestedDefault](s), "default applies to the top-level members"},
		{"enumTitle count", register[titleCount](s), "1 enumTitle for 2 enum values"},
		{"allow on a tool", register[allowOnTool](s), "allow applies to resource template variables only"},
		{"not keyword=value", register[notKeyValue](s), `"enum" is not keyword=value`},
		{"unclosed quote", register[unclosedQuote](s), "pattern: the quoted value is not closed"},
		{"given twice", register[givenTwice](s), "minimum is given twice"},
		{"enum value twice", register[enumTwice](s), `enum value "x" is given twice`},
		{"negative length", register[negativeLength](s), "minLength=-1 is not a length"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil {
				t.Fatal("registered")
			}
			wantContains(t, "error", tc.err.Error(), `tool "x": cannot infer an input schema: the mcp tag of field A of `, tc.want)
		})
	}
	// An output schema takes the tags too, but no defaults.
	type out struct {
		A int `json:"a,omitempty" mcp:"default=1"`
	}
	err := mcpserver.AddTool(s, &mcp.Tool{Name: "y"}, func(context.Context, *mcpserver.Call, twoTagged) (out, error) { return out{}, nil })
	wantContains(t, "error", fmt.Sprint(err), `tool "y": cannot infer an output schema`, "default applies to the top-level members")
}

// register adds a tool "x" whose arguments are In, and returns the error.
func register[In any](s *mcpserver.Server) error {
	return mcpserver.AddTool(s, &mcp.Tool{Name: "x"}, func(context.Context, *mcpserver.Call, In) (string, error) { return "", nil })
}

type draftArgs struct {
	Tone  string `json:"tone" mcp:"enum=formal,enum=casual,title=Tone of voice"`
	Topic string `json:"topic,omitempty" mcp:"minLength=3,maxLength=40,pattern=^[a-z ]+$,default=release notes"`
}

// A prompt's arguments are checked against their tags before the body
// runs, with -32602 naming the argument and the rule; an absent one takes
// its default, and the title is advertised.
func TestPromptTags(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	runs := new(counter)
	mustOK(t, mcpserver.AddPrompt(s, &mcp.Prompt{Name: "draft"}, func(ctx context.Context, c *mcpserver.Call, a draftArgs) (*mcp.GetPromptResult, error) {
		runs.add("body")
		return userSays(a.Tone + ": " + a.Topic), nil
	}))
	sess := connect(t, s, nil)
	list, err := sess.ListPrompts(ctx, "")
	mustOK(t, err)
	if got := list.Prompts[0].Arguments; len(got) != 2 || got[0].Title != "Tone of voice" || !got[0].Required || got[1].Required {
		t.Errorf("arguments = %+v", got)
	}
	for _, tc := range []struct {
		args map[string]string
		want string
	}{
		{map[string]string{"tone": "rude"}, `argument "tone": enum: rude does not equal any of: [formal casual]`},
		{map[string]string{"tone": "formal", "topic": "go"}, `argument "topic": minLength: "go" contains 2 Unicode code points, fewer than 3`},
		{map[string]string{"tone": "formal", "topic": "Go 2"}, `argument "topic": pattern: "Go 2" does not match regular expression "^[a-z ]+$"`},
	} {
		_, err := sess.GetPrompt(ctx, "draft", tc.args)
		wantRPCError(t, err, jsonrpc.CodeInvalidParams, `Invalid params: prompt "draft": `+tc.want)
	}
	if runs.get("body") != 0 {
		t.Fatal("the body ran on arguments that break their rules")
	}
	res, err := sess.GetPrompt(ctx, "draft", map[string]string{"tone": "casual"})
	mustOK(t, err)
	if got := promptText(t, res); got != "casual: release notes" {
		t.Errorf("text = %q", got)
	}
	res, err = sess.GetPrompt(ctx, "draft", map[string]string{"tone": "casual", "topic": "new api"})
	mustOK(t, err)
	if got := promptText(t, res); got != "casual: new api" {
		t.Errorf("text = %q", got)
	}
}

type shelfVars struct {
	Shelf string `json:"shelf" mcp:"enum=a,enum=b"`
	Book  string `json:"book" mcp:"pattern=^[0-9]{3}$"`
}

// A template variable's tag rules are checked like a prompt argument's,
// with the URI in data.
func TestTemplateVariableTags(t *testing.T) {
	s, _ := newServer(t, nil)
	const tmpl = "lib://{shelf}/{book}"
	runs := echoTemplate(t, s, tmpl, func(v shelfVars) string { return v.Shelf + v.Book })
	sess := connect(t, s, nil)
	wantRefused(t, sess, tmpl, "lib://c/123", "shelf", "enum: c does not equal any of: [a b]")
	wantRefused(t, sess, tmpl, "lib://a/12", "book", `pattern: "12" does not match regular expression "^[0-9]{3}$"`)
	if runs.get("body") != 0 {
		t.Fatal("the function ran on variables that break their rules")
	}
	got, err := readVar(t, sess, "lib://b/042")
	mustOK(t, err)
	if got != "b042" {
		t.Errorf("got %q", got)
	}
}

type tripForm struct {
	Region string  `json:"region" mcp:"enum=eu-west-1,enum=us-east-2,enumTitle=Europe (Ireland),enumTitle=US East (Ohio),title=Region"`
	Size   string  `json:"size" mcp:"enum=s,enum=m,enum=l,default=m"`
	Name   string  `json:"name" mcp:"minLength=1,maxLength=12,title=Name"`
	Start  string  `json:"start,omitempty" mcp:"format=date"`
	Seats  int     `json:"seats" mcp:"minimum=1,maximum=9,default=2"`
	Budget float64 `json:"budget,omitempty" mcp:"maximum=1000.5"`
	Hotel  bool    `json:"hotel,omitempty" mcp:"default=true,title=Book a hotel"`
}

// An Elicit form carries what its struct's tags say, within the
// protocol's form schema, and an answer that breaks a rule is refused.
func TestElicitFormTags(t *testing.T) {
	trip := mcpserver.Elicit[tripForm]("trip", func(a dbArgs, _ *mcpserver.Call) string { return "Plan " + a.Name })
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "plan"}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) {
		f := trip.Get(c)
		return fmt.Sprintf("%s %s %s %d %v", f.Region, f.Size, f.Name, f.Seats, f.Hotel), nil
	}, trip))
	el := &elicitor{answer: func(string) *mcp.ElicitResult { return accept(nil) }}
	sess := connect(t, s, &client.Options{Elicit: el.elicit})
	call, err := client.ToolCall("plan", map[string]any{"name": "x"})
	mustOK(t, err)
	p := begin(t, sess, call)
	req, ok := p.InputRequests["trip"]
	if !ok {
		t.Fatalf("asked %v", p.InputRequests)
	}
	raw, err := mcp.Marshal(req)
	mustOK(t, err)
	wantJSON(t, "the form", raw, `{
		"method": "elicitation/create",
		"params": {
			"message": "Plan x",
			"requestedSchema": {
				"type": "object",
				"properties": {
					"region": {"type": "string", "title": "Region", "oneOf": [
						{"const": "eu-west-1", "title": "Europe (Ireland)"}, {"const": "us-east-2", "title": "US East (Ohio)"}]},
					"size": {"type": "string", "enum": ["s", "m", "l"], "default": "m"},
					"name": {"type": "string", "title": "Name", "minLength": 1, "maxLength": 12},
					"start": {"type": "string", "format": "date"},
					"seats": {"type": "integer", "minimum": 1, "maximum": 9, "default": 2},
					"budget": {"type": "number", "maximum": 1000.5},
					"hotel": {"type": "boolean", "title": "Book a hotel", "default": true}
				},
				"required": ["region", "size", "name", "seats"]
			}
		}
	}`)
	good := map[string]any{"region": "eu-west-1", "size": "l", "name": "Ada", "seats": 3}
	for field, bad := range map[string]any{"region": "mars", "size": "xl", "name": "", "seats": 10, "budget": 2000} {
		content := map[string]any{}
		for k, v := range good {
			content[k] = v
		}
		content[field] = bad
		res := finish(t, sess, p, responses(t, map[string]mcp.InputResponse{"trip": accept(content)}))
		if !res.IsError {
			t.Errorf("%s=%v: accepted", field, bad)
			continue
		}
		wantContains(t, field, onlyText(t, res), `question "trip"`, "does not match the requested schema", "/properties/"+field)
	}
	res := finish(t, sess, p, responses(t, map[string]mcp.InputResponse{"trip": accept(good)}))
	wantText(t, res, false, "eu-west-1 l Ada 3 false")
}

func TestElicitFormTagErrors(t *testing.T) {
	msg := func(dbArgs, *mcpserver.Call) string { return "?" }
	type withPattern struct {
		A string `json:"a" mcp:"pattern=^x$"`
	}
	type numberEnum struct {
		A int `json:"a" mcp:"enum=1,enum=2"`
	}
	type otherFormat struct {
		A string `json:"a" mcp:"format=uuid"`
	}
	type allow struct {
		A string `json:"a" mcp:"allow=dots"`
	}
	type enumLength struct {
		A string `json:"a" mcp:"enum=x,enum=yy,minLength=2"`
	}
	type enumFormat struct {
		A string `json:"a,omitempty" mcp:"enum=2026-01-01,format=date"`
	}
	s, _ := newServer(t, nil)
	for name, q := range map[string]mcpserver.Dependency{
		"an elicitation form's string fields carry no pattern":                                           mcpserver.Elicit[withPattern]("q", msg),
		`field "a" of mcpserver_test.numberEnum has an enum: an elicitation form's enums are of strings`: mcpserver.Elicit[numberEnum]("q", msg),
		`format "uuid": an elicitation form's formats are date, date-time, email and uri`:                mcpserver.Elicit[otherFormat]("q", msg),
		"allow applies to resource template variables only":                                              mcpserver.Elicit[allow]("q", msg),
		"field A of mcpserver_test.enumLength: an elicitation form's enum fields carry no minLength":     mcpserver.Elicit[enumLength]("q", msg),
		"field A of mcpserver_test.enumFormat: an elicitation form's enum fields carry no minLength":     mcpserver.Elicit[enumFormat]("q", msg),
	} {
		err := mcpserver.AddTool(s, &mcp.Tool{Name: "t"}, func(context.Context, *mcpserver.Call, dbArgs) (string, error) { return "", nil }, q)
		wantContains(t, "error", fmt.Sprint(err), `question "q"`, name)
	}
}

type sizeArgs struct {
	Size string `json:"size" mcp:"enum=s,enum=l,enumTitle=Small,enumTitle=Large"`
}

// A labelled enum is a oneOf of const and title in a tool's schema, and
// checked as one.
func TestToolTitledEnum(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "size"}, func(ctx context.Context, c *mcpserver.Call, a sizeArgs) (string, error) {
		return a.Size, nil
	}))
	sess := connect(t, s, nil)
	list, err := sess.ListTools(ctx, "")
	mustOK(t, err)
	wantJSON(t, "inputSchema", list.Tools[0].InputSchema, `{
		"type": "object",
		"properties": {"size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]}},
		"required": ["size"],
		"additionalProperties": false
	}`)
	wantText(t, callRaw(t, ctx, sess.CallToolRound, "size", `{"size":"l"}`), false, "l")
	res := callRaw(t, ctx, sess.CallToolRound, "size", `{"size":"m"}`)
	if !res.IsError {
		t.Fatalf("size m accepted: %s", onlyText(t, res))
	}
	wantContains(t, "error", onlyText(t, res), "/properties/size", "oneOf")
}
