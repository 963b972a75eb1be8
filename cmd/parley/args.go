package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// options are the flags of one run.
type options struct {
	url         string
	command     []string // the stdio server, after --
	protocol    string
	jsonOut     bool
	jsonArgs    string // --json '{...}' or @file
	answers     []string
	answersFile string
	refuse      string
	noInput     bool
	open        bool
	samplingCmd string
	roots       []string
	outDir      string
	logLevel    string
	help        bool
	version     bool
	auth        authFlags // --auth and its companions (auth.go)

	// connectTimeout bounds the wait for a stdio server's first answer
	// (0: no bound).
	connectTimeout time.Duration
	// flagArgs are the flags as given (with their values), to repeat
	// them in a corrected command line.
	flagArgs []string
}

// parseArgs reads the flags (anywhere before --) and returns the words of
// the command. A first word that is an http(s) URL is the server.
func parseArgs(args []string) (*options, []string, error) {
	o := &options{outDir: ".", connectTimeout: defaultConnectTimeout}
	var words []string
	firstWord := -1
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			o.command = args[i+1:]
			if len(o.command) == 0 {
				return nil, nil, errors.New("-- must be followed by the server's command")
			}
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			if len(words) == 0 {
				firstWord = i
			}
			words = append(words, arg)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		first := i
		next := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(args) || args[i+1] == "--" {
				return "", fmt.Errorf("flag --%s needs a value", name)
			}
			i++
			return args[i], nil
		}
		var err error
		switch name {
		case "h", "help":
			o.help = true
		case "version":
			o.version = true
		case "json":
			// Bare --json asks for JSON output; --json with a value that
			// starts with { or @ gives the arguments.
			switch {
			case hasValue:
				o.jsonArgs = value
			case i+1 < len(args) && looksLikeJSONArgs(args[i+1]):
				i++
				o.jsonArgs = args[i]
			default:
				o.jsonOut = true
			}
		case "url":
			o.url, err = next()
		case "protocol":
			o.protocol, err = next()
		case "answer":
			var v string
			if v, err = next(); err == nil {
				if !strings.Contains(v, "=") {
					err = fmt.Errorf("--answer %q: want KEY=VALUE", v)
				}
				o.answers = append(o.answers, v)
			}
		case "answers":
			o.answersFile, err = next()
		case "refuse":
			if o.refuse, err = next(); err == nil && o.refuse != "decline" && o.refuse != "cancel" {
				err = fmt.Errorf("--refuse %q: want decline or cancel", o.refuse)
			}
		case "no-input":
			o.noInput = true
		case "open":
			o.open = true
		case "sampling-cmd":
			o.samplingCmd, err = next()
		case "root":
			var v string
			if v, err = next(); err == nil {
				o.roots = append(o.roots, v)
			}
		case "out":
			o.outDir, err = next()
		case "log-level":
			o.logLevel, err = next()
		case "connect-timeout":
			var v string
			if v, err = next(); err == nil {
				o.connectTimeout, err = time.ParseDuration(v)
				if err != nil || o.connectTimeout < 0 {
					err = fmt.Errorf("--connect-timeout %q: want a duration such as 10s, or 0 to wait as long as it takes", v)
				}
			}
		default:
			var known bool
			if known, err = o.auth.parse(name, next); !known {
				if len(words) > 0 && !isCommandWord(words[0]) && !isURL(words[0]) {
					if ferr := serverFlagError(o, args, firstWord); ferr != nil {
						return nil, nil, ferr
					}
				}
				err = unknownFlag(arg, name)
			}
		}
		if err != nil {
			return nil, nil, err
		}
		o.flagArgs = append(o.flagArgs, args[first:i+1]...)
	}
	if len(words) > 0 && isURL(words[0]) {
		if o.url != "" {
			return nil, nil, fmt.Errorf("two servers: --url %s and %s", o.url, words[0])
		}
		o.url, words = words[0], words[1:]
	}
	if o.url != "" && len(o.command) > 0 {
		return nil, nil, errors.New("give a URL or a command after --, not both")
	}
	return o, words, nil
}

func looksLikeJSONArgs(s string) bool { return strings.HasPrefix(s, "{") || strings.HasPrefix(s, "@") }

func isURL(s string) bool { return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") }

// readJSONArgs returns the object of --json: inline, @file, or @- for
// stdin.
func readJSONArgs(spec string, stdin io.Reader) (map[string]any, error) {
	data := []byte(spec)
	if name, ok := strings.CutPrefix(spec, "@"); ok {
		var err error
		if name == "-" {
			data, err = io.ReadAll(stdin)
		} else {
			data, err = os.ReadFile(name)
		}
		if err != nil {
			return nil, fmt.Errorf("--json %s: %w", spec, err)
		}
	}
	var m map[string]any
	if err := decodeJSON(data, &m); err != nil {
		return nil, fmt.Errorf("--json: the arguments must be a JSON object: %w", err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// decodeJSON decodes data into v, keeping numbers exact (json.Number).
func decodeJSON(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

// schemaTypes returns each property's JSON Schema type from a tool's input
// schema ("" when it has none, or several).
func schemaTypes(schema json.RawMessage) map[string]string {
	var s struct {
		Properties map[string]struct {
			Type json.RawMessage `json:"type"`
		} `json:"properties"`
	}
	out := map[string]string{}
	if json.Unmarshal(schema, &s) != nil {
		return out
	}
	for name, p := range s.Properties {
		var t string
		if json.Unmarshal(p.Type, &t) == nil {
			out[name] = t
			continue
		}
		// ["string","null"] and the like: the one non-null type.
		var ts []string
		if json.Unmarshal(p.Type, &ts) == nil {
			for _, x := range ts {
				if x != "null" {
					if t != "" {
						t = ""
						break
					}
					t = x
				}
			}
			out[name] = t
		}
	}
	return out
}

// typedArgs turns KEY=VALUE pairs into arguments, each typed by its
// property's schema type (types; nil for none). They are added to base
// (from --json), overriding it.
func typedArgs(pairs []string, types map[string]string, base map[string]any) (map[string]any, error) {
	out := base
	if out == nil {
		out = map[string]any{}
	}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("argument %q: want KEY=VALUE", p)
		}
		val, err := typedValue(v, types[k])
		if err != nil {
			return nil, fmt.Errorf("argument %s: %w", k, err)
		}
		out[k] = val
	}
	return out, nil
}

// typedValue converts one command-line value to the JSON type t.
func typedValue(v, t string) (any, error) {
	switch t {
	case "string":
		return v, nil
	case "integer":
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return nil, fmt.Errorf("%q is not an integer", v)
		}
		return json.Number(v), nil
	case "number":
		if _, err := strconv.ParseFloat(v, 64); err != nil || !json.Valid([]byte(v)) {
			return nil, fmt.Errorf("%q is not a number", v)
		}
		return json.Number(v), nil
	case "boolean":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", v)
		}
		return b, nil
	case "array", "object":
		var x any
		if err := decodeJSON([]byte(v), &x); err != nil {
			return nil, fmt.Errorf("%q is not JSON: %w", v, err)
		}
		if _, isArr := x.([]any); t == "array" && !isArr {
			return nil, fmt.Errorf("%q is not a JSON array", v)
		}
		if _, isObj := x.(map[string]any); t == "object" && !isObj {
			return nil, fmt.Errorf("%q is not a JSON object", v)
		}
		return x, nil
	}
	// No schema type: JSON when it parses as such, a string otherwise.
	var x any
	if decodeJSON([]byte(v), &x) == nil {
		return x, nil
	}
	return v, nil
}

// stringArgs turns KEY=VALUE pairs into prompt arguments, which are all
// strings.
func stringArgs(pairs []string, base map[string]any) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range base {
		switch v := v.(type) {
		case string:
			out[k] = v
		default:
			b, _ := json.Marshal(v)
			out[k] = string(b)
		}
	}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("argument %q: want KEY=VALUE", p)
		}
		out[k] = v
	}
	return out, nil
}
