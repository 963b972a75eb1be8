// Command everything-client is the client the official MCP conformance
// suite (github.com/modelcontextprotocol/conformance) tests Parley against.
//
// The suite starts a mock server for each client scenario and runs this
// command with the mock server's URL as the last argument. It names the
// scenario in MCP_CONFORMANCE_SCENARIO and, for some scenarios, passes
// JSON in MCP_CONFORMANCE_CONTEXT. The client then does what the scenario
// needs: the mock server records the traffic and scores it.
//
//	MCP_CONFORMANCE_SCENARIO=tools_call everything-client http://localhost:1234/mcp
//
// conformance/run.sh builds it and hands it to `conformance client`.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/parley-mcp/parley/auth/oauthclient"
	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// A scenario drives one conformance scenario against the server at url.
type scenario func(ctx context.Context, url string, cfg *config) error

// config is the scenario's MCP_CONFORMANCE_CONTEXT, decoded.
type config struct {
	// ToolCalls are the calls http-custom-headers asks for.
	ToolCalls []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"toolCalls"`
	// ClientID and ClientSecret are the pre-registered client of
	// auth/pre-registration, and of the client credentials and
	// enterprise-managed authorization scenarios.
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	// PrivateKeyPEM and SigningAlgorithm are the client's key of
	// auth/client-credentials-jwt (PKCS #8).
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
	// The identity provider of auth/enterprise-managed-authorization:
	// the user's ID token from single sign-on, the client's id there,
	// and where its token endpoint is.
	IdPIDToken       string `json:"idp_id_token"`
	IdPClientID      string `json:"idp_client_id"`
	IdPTokenEndpoint string `json:"idp_token_endpoint"`
	// ValidJWT is the workload's platform token of auth/wif-jwt-bearer.
	ValidJWT string `json:"valid_jwt"`
}

var scenarios = map[string]scenario{
	"tools_call":                       toolsCall,
	"request-metadata":                 requestMetadata,
	"http-standard-headers":            standardHeaders,
	"http-custom-headers":              customHeaders,
	"http-invalid-tool-headers":        invalidToolHeaders,
	"json-schema-ref-no-deref":         listToolsOnly,
	"json-schema-2020-12-preservation": schemaPreservation,
	"sep-2322-client-request-state":    requestState,

	// The skills extension (skills.go).
	"sep-2640-client-no-prefetch":        skillsList,
	"sep-2640-client-verify-digest":      skillsLoad,
	"sep-2640-client-verify-size":        skillsLoad,
	"sep-2640-client-verify-frontmatter": skillsLoad,

	// The authorization extensions (auth.go): no person present, and
	// DPoP.
	"auth/client-credentials-basic":         clientCredentials,
	"auth/client-credentials-jwt":           clientCredentials,
	"auth/enterprise-managed-authorization": enterpriseManaged,
	"auth/wif-jwt-bearer":                   workloadIdentity,
	"auth/dpop":                             dpop,
	"auth/dpop-nonce":                       dpop,

	// 2025-11-25 scenarios: a legacy session (see connect).
	"initialize":                          initialize,
	"elicitation-sep1034-client-defaults": elicitationDefaults,
	"sse-retry":                           sseRetry,
}

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	slog.SetDefault(log)
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: MCP_CONFORMANCE_SCENARIO=<scenario> everything-client <server-url>")
		os.Exit(2)
	}
	url := os.Args[len(os.Args)-1]
	name := os.Getenv("MCP_CONFORMANCE_SCENARIO")

	cfg := new(config)
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), cfg); err != nil {
			log.Error("bad MCP_CONFORMANCE_CONTEXT", "err", err)
			os.Exit(2)
		}
	}
	run, ok := scenarios[name]
	switch {
	case ok:
	case strings.HasPrefix(name, "auth/"):
		run = authorized
	default:
		// Scenarios this client has no plan for get the plain flow:
		// connect, list the tools, call the first.
		log.Warn("no specific handler for this scenario; running the basic flow", "scenario", name)
		run = basic
	}

	// The suite gives each scenario 30 s; stay well inside it.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := run(ctx, url, cfg); err != nil {
		log.Error("scenario failed", "scenario", name, "err", err)
		os.Exit(1)
	}
	log.Info("scenario done", "scenario", name)
}

// connect opens a session to url over Streamable HTTP. The suite says in
// MCP_CONFORMANCE_PROTOCOL_VERSION which generation a scenario tests; a
// legacy version pins it, since several mock servers answer the
// server/discover probe of the automatic mode with an empty result.
func connect(ctx context.Context, url string, opts *client.Options) (*client.Session, error) {
	return connectHTTP(ctx, url, opts, nil)
}

// connectHTTP is connect with options for the HTTP transport.
func connectHTTP(ctx context.Context, url string, opts *client.Options, topts *streamhttp.ClientOptions) (*client.Session, error) {
	var o client.Options
	if opts != nil {
		o = *opts
	}
	if v := mcp.ProtocolVersion(os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION")); v.Era() == mcp.EraLegacy && o.ProtocolVersion == "" {
		o.ProtocolVersion = v
	}
	opts = &o
	c := client.New(mcp.Implementation{Name: "parley-everything-client", Version: "0.1.0"}, opts)
	sess, err := c.Connect(ctx, streamhttp.NewClientTransport(url, topts))
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return sess, nil
}

// withSession connects to url with opts, runs f and closes the session.
func withSession(ctx context.Context, url string, opts *client.Options, f func(*client.Session) error) error {
	sess, err := connect(ctx, url, opts)
	if err != nil {
		return err
	}
	defer sess.Close()
	return f(sess)
}

// withTools is withSession for the scenarios that list the tools first, as
// a conforming client does before it calls one; f gets them.
func withTools(ctx context.Context, url string, opts *client.Options, f func(*client.Session, []mcp.Tool) error) error {
	return withSession(ctx, url, opts, func(sess *client.Session) error {
		tools, err := listTools(ctx, sess)
		if err != nil {
			return err
		}
		return f(sess, tools)
	})
}

// listTools returns every tool of every page.
func listTools(ctx context.Context, sess *client.Session) ([]mcp.Tool, error) {
	var tools []mcp.Tool
	for t, err := range sess.Tools(ctx) {
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		tools = append(tools, *t)
	}
	return tools, nil
}

// basic connects, lists the tools and calls the first one.
func basic(ctx context.Context, url string, _ *config) error {
	return withTools(ctx, url, nil, func(sess *client.Session, tools []mcp.Tool) error {
		if len(tools) > 0 {
			if _, err := sess.CallTool(ctx, tools[0].Name, map[string]any{}); err != nil {
				return fmt.Errorf("tools/call %s: %w", tools[0].Name, err)
			}
		}
		return nil
	})
}

// cimdURL is the client ID metadata document URL the auth/* scenarios
// expect: the mock authorization servers take it as a client_id without
// fetching it.
const cimdURL = "https://conformance-test.local/client-metadata.json"

// authorized is the basic flow through the OAuth client, for every auth/*
// scenario: the first request is refused with 401, and the transport
// discovers, registers, authorizes (headless: the mock authorization
// server redirects at once) and retries. The scenarios that test a
// refusal (iss, issuer or resource mismatch, the step-up limit) expect
// this to fail.
func authorized(ctx context.Context, url string, cfg *config) error {
	return authorizedWith(ctx, url, &oauthclient.Config{
		Authorizer:          &oauthclient.HeadlessAuthorizer{},
		ClientName:          "parley-everything-client",
		ClientIDMetadataURL: cimdURL,
		PreRegistered:       cfg.preRegistered(nil),
	})
}

// authorizedWith is authorized with an OAuth client configured by oc: it
// connects, lists the tools and calls each.
func authorizedWith(ctx context.Context, url string, occ *oauthclient.Config) error {
	oc, err := oauthclient.New(occ)
	if err != nil {
		return err
	}
	sess, err := connectHTTP(ctx, url, nil, &streamhttp.ClientOptions{HTTPClient: oc.Client()})
	if err != nil {
		return err
	}
	defer sess.Close()
	tools, err := listTools(ctx, sess)
	if err != nil {
		return err
	}
	for _, t := range tools {
		if _, err := sess.CallTool(ctx, t.Name, map[string]any{}); err != nil {
			return fmt.Errorf("tools/call %s: %w", t.Name, err)
		}
	}
	return nil
}

// initialize opens a session (the initialize handshake, at 2025-11-25),
// lists the tools and closes.
func initialize(ctx context.Context, url string, _ *config) error {
	return withTools(ctx, url, nil, func(sess *client.Session, tools []mcp.Tool) error {
		slog.Info("initialized", "version", sess.ProtocolVersion(), "tools", len(tools))
		return nil
	})
}

// elicitationDefaults accepts the server's form with the defaults its
// schema gives (SEP-1034), as a host does when its user changes nothing.
func elicitationDefaults(ctx context.Context, url string, _ *config) error {
	opts := &client.Options{Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
		form, ok := p.(*mcp.ElicitRequestFormParams)
		if !ok {
			return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
		}
		return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: form.RequestedSchema.Defaults()}, nil
	}}
	return withTools(ctx, url, opts, func(sess *client.Session, tools []mcp.Tool) error {
		res, err := sess.CallTool(ctx, "test_client_elicitation_defaults", map[string]any{})
		if err != nil {
			return fmt.Errorf("tools/call test_client_elicitation_defaults: %w", err)
		}
		slog.Info("test_client_elicitation_defaults", "result", text(res))
		return nil
	})
}

// sseRetry calls test_reconnection, whose event stream the server closes
// before the result: the transport resumes it with Last-Event-ID after the
// server's retry delay.
func sseRetry(ctx context.Context, url string, _ *config) error {
	return withTools(ctx, url, nil, func(sess *client.Session, tools []mcp.Tool) error {
		res, err := sess.CallTool(ctx, "test_reconnection", map[string]any{})
		if err != nil {
			return fmt.Errorf("tools/call test_reconnection: %w", err)
		}
		slog.Info("test_reconnection", "result", text(res))
		return nil
	})
}

// toolsCall calls add_numbers, the mock server's one tool.
func toolsCall(ctx context.Context, url string, _ *config) error {
	return withTools(ctx, url, nil, func(sess *client.Session, tools []mcp.Tool) error {
		for _, t := range tools {
			if t.Name != "add_numbers" {
				continue
			}
			res, err := sess.CallTool(ctx, t.Name, map[string]any{"a": 2, "b": 3})
			if err != nil {
				return fmt.Errorf("tools/call add_numbers: %w", err)
			}
			slog.Info("add_numbers", "result", text(res))
			return nil
		}
		return errors.New("the server has no add_numbers tool")
	})
}

// requestMetadata makes a few requests, so the mock server can check the
// _meta and MCP-Protocol-Version of each. It refuses the first request with
// -32022; the session is expected to retry with a version from the list.
// The client declares every capability it has a value for, so the mock
// server can check that each is an object.
func requestMetadata(ctx context.Context, url string, _ *config) error {
	return withSession(ctx, url, &client.Options{Capabilities: &mcp.ClientCapabilities{
		Roots:       &mcp.RootsCapability{},
		Sampling:    &mcp.SamplingCapability{},
		Elicitation: &mcp.ElicitationCapability{},
	}}, func(sess *client.Session) error {
		if _, err := sess.ListTools(ctx, ""); err != nil {
			return fmt.Errorf("tools/list: %w", err)
		}
		return nil
	})
}

// standardHeaders uses every request kind that names something (tools/call,
// resources/read, prompts/get) on everything the server lists, so the mock
// server sees Mcp-Method and Mcp-Name on each.
func standardHeaders(ctx context.Context, url string, _ *config) error {
	return withSession(ctx, url, nil, func(sess *client.Session) error {

		var errs []error
		tools, err := listTools(ctx, sess)
		errs = append(errs, err)
		for _, t := range tools {
			_, err := sess.CallTool(ctx, t.Name, map[string]any{})
			errs = append(errs, wrap("tools/call "+t.Name, err))
		}
		for r, err := range sess.Resources(ctx) {
			if err != nil {
				errs = append(errs, wrap("resources/list", err))
				break
			}
			_, err := sess.ReadResource(ctx, r.URI)
			errs = append(errs, wrap("resources/read "+r.URI, err))
		}
		for p, err := range sess.Prompts(ctx) {
			if err != nil {
				errs = append(errs, wrap("prompts/list", err))
				break
			}
			_, err := sess.GetPrompt(ctx, p.Name, nil)
			errs = append(errs, wrap("prompts/get "+p.Name, err))
		}
		return errors.Join(errs...)
	})
}

// customHeaders lists the tools (so the session learns which arguments the
// x-mcp-header annotations mirror into Mcp-Param-* headers), then makes the
// calls the scenario's context names, with its arguments as they are.
func customHeaders(ctx context.Context, url string, cfg *config) error {
	if len(cfg.ToolCalls) == 0 {
		return errors.New("MCP_CONFORMANCE_CONTEXT names no toolCalls")
	}
	return withSession(ctx, url, nil, func(sess *client.Session) error {
		if _, err := listTools(ctx, sess); err != nil {
			return err
		}
		var errs []error
		for _, call := range cfg.ToolCalls {
			var args any // nil: no arguments
			if len(call.Arguments) > 0 {
				args = call.Arguments
			}
			_, err := sess.CallTool(ctx, call.Name, args)
			errs = append(errs, wrap("tools/call "+call.Name, err))
		}
		return errors.Join(errs...)
	})
}

// invalidToolHeaders calls every tool the session lists. The server offers
// one valid tool and ten whose x-mcp-header annotations are invalid: a
// conforming client drops those from the list, so only valid_tool is
// called.
func invalidToolHeaders(ctx context.Context, url string, _ *config) error {
	return withTools(ctx, url, nil, func(sess *client.Session, tools []mcp.Tool) error {
		var errs []error
		for _, t := range tools {
			_, err := sess.CallTool(ctx, t.Name, map[string]any{"region": "us-west1"})
			errs = append(errs, wrap("tools/call "+t.Name, err))
		}
		return errors.Join(errs...)
	})
}

// listToolsOnly lists the tools and nothing else. The server's one tool has
// a $ref to a network URL, which the client must never fetch.
func listToolsOnly(ctx context.Context, url string, _ *config) error {
	return withTools(ctx, url, nil, func(sess *client.Session, tools []mcp.Tool) error {
		for _, t := range tools {
			slog.Info("tool", "name", t.Name, "inputSchema", string(t.InputSchema))
		}
		return nil
	})
}

// schemaPreservation sends the inputSchema of json_schema_2020_12_tool, as
// the session received it, back to the server through json_schema_echo. The
// server compares it with what it sent: no keyword may be lost on the way.
func schemaPreservation(ctx context.Context, url string, _ *config) error {
	return withTools(ctx, url, nil, func(sess *client.Session, tools []mcp.Tool) error {
		for _, t := range tools {
			if t.Name == "json_schema_2020_12_tool" {
				_, err := sess.CallTool(ctx, "json_schema_echo", map[string]any{"schema": t.InputSchema})
				return wrap("tools/call json_schema_echo", err)
			}
		}
		return errors.New("the server has no json_schema_2020_12_tool")
	})
}

// requestState calls the four tools of the SEP-2322 client scenario. Two
// of them answer input_required with an elicitation: the session's
// multi-round-trip loop fulfils it through the Elicit callback (the user
// confirms) and retries, echoing requestState when there is one.
func requestState(ctx context.Context, url string, _ *config) error {
	confirm := func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
		if _, ok := p.(*mcp.ElicitRequestFormParams); !ok {
			return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil // this client opens no URLs
		}
		return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"confirmed": true}}, nil
	}
	return withSession(ctx, url, &client.Options{Elicit: confirm}, func(sess *client.Session) error {
		var errs []error
		for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
			res, err := sess.CallTool(ctx, name, map[string]any{})
			if err != nil {
				errs = append(errs, fmt.Errorf("tools/call %s: %w", name, err))
				continue
			}
			slog.Info("tool result", "tool", name, "text", text(res))
		}
		return errors.Join(errs...)
	})
}

func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// text joins the text blocks of a tool result.
func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, " ")
}
