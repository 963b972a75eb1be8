package requeststate_test

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
)

// KeyDecrypter is the one call a KMS-backed codec makes: unwrap a data key.
// An adapter over a cloud KMS client (AWS KMS Decrypt, Google Cloud KMS
// Decrypt, Vault transit) satisfies it; that call goes over the network,
// which is why the codec makes it once, at start-up.
type KeyDecrypter interface {
	Decrypt(ctx context.Context, wrapped []byte) ([]byte, error)
}

// fakeKMS stands in for a key management service: its master key never
// leaves it. It counts the calls made to it.
type fakeKMS struct {
	master cipher.AEAD
	calls  atomic.Int64
}

func newFakeKMS() *fakeKMS {
	k := make([]byte, 32)
	rand.Read(k)
	block, err := aes.NewCipher(k)
	if err != nil {
		panic(err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return &fakeKMS{master: gcm}
}

// GenerateDataKey returns a new data key wrapped under the master key, as
// an operator stores it in the service's configuration.
func (k *fakeKMS) GenerateDataKey() []byte {
	dataKey := make([]byte, 32)
	rand.Read(dataKey)
	nonce := make([]byte, k.master.NonceSize())
	rand.Read(nonce)
	return k.master.Seal(nonce, nonce, dataKey, nil)
}

func (k *fakeKMS) Decrypt(ctx context.Context, wrapped []byte) ([]byte, error) {
	k.calls.Add(1)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := k.master.NonceSize()
	if len(wrapped) < n {
		return nil, errors.New("kms: invalid ciphertext")
	}
	return k.master.Open(nil, wrapped[:n], wrapped[n:], nil)
}

// kmsCodec is envelope encryption: the data key is unwrapped once, and
// every token is sealed locally with AES-GCM. Tokens are "kms1." and
// unpadded base64url of nonce || ciphertext; the prefix names the format
// and is bound as associated data. The codec only encrypts and
// authenticates: expiry, request, audience and principal are the
// boundary's, which stamps them into the plaintext before Seal and checks
// them after Unseal.
type kmsCodec struct{ aead cipher.AEAD }

const kmsPrefix = "kms1."

// newKMSCodec unwraps the data key with one KMS call and keeps only the
// AEAD built from it.
func newKMSCodec(ctx context.Context, kms KeyDecrypter, wrapped []byte) (*kmsCodec, error) {
	dataKey, err := kms.Decrypt(ctx, wrapped)
	if err != nil {
		return nil, fmt.Errorf("unwrapping the requestState data key: %w", err)
	}
	defer clear(dataKey)
	block, err := aes.NewCipher(dataKey)
	if err != nil {
		return nil, fmt.Errorf("the requestState data key: %w", err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &kmsCodec{aead: gcm}, nil
}

func (c *kmsCodec) Seal(plaintext []byte) (string, error) {
	n := c.aead.NonceSize()
	nonce := make([]byte, n, n+len(plaintext)+c.aead.Overhead())
	rand.Read(nonce)
	raw := c.aead.Seal(nonce, nonce, plaintext, []byte(kmsPrefix))
	return kmsPrefix + base64.RawURLEncoding.EncodeToString(raw), nil
}

func (c *kmsCodec) Unseal(token string) ([]byte, error) {
	body, ok := strings.CutPrefix(token, kmsPrefix)
	if !ok {
		return nil, &requeststate.InvalidStateError{Reason: "not a kms1 token"}
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(body)
	// Strict refuses stray padding bits; re-encoding also refuses the line
	// breaks the decoder would skip.
	if err != nil || base64.RawURLEncoding.EncodeToString(raw) != body || len(raw) < c.aead.NonceSize()+c.aead.Overhead() {
		return nil, &requeststate.InvalidStateError{Reason: "malformed kms1 token"}
	}
	n := c.aead.NonceSize()
	plain, err := c.aead.Open(nil, raw[:n], raw[n:], []byte(kmsPrefix))
	if err != nil {
		return nil, &requeststate.InvalidStateError{Reason: "kms1 authentication failed"}
	}
	return plain, nil
}

// refundServer is a server named name whose refund tool asks for a
// confirmation, keeping the order in its plaintext state.
func refundServer(name string, p *requeststate.Policy) *server.Server {
	s := server.New(mcp.Implementation{Name: name, Version: "1.0.0"}, nil)
	requeststate.MustProtect(s, p)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		var args struct {
			Order int `json:"order"`
		}
		if err := p.DecodeArguments(&args); err != nil {
			return nil, wire.InvalidParams("Invalid params: %v", err)
		}
		if p.RequestState == "" {
			return &mcp.InputRequiredResult{
				InputRequests: mcp.InputRequests{"confirm": mcp.NewElicitFormRequest(fmt.Sprintf("Refund order %d?", args.Order), mcp.ElicitRequestedSchema{
					Properties: map[string]mcp.PrimitiveSchemaDefinition{"ok": &mcp.BooleanSchema{}},
				})},
				RequestState: fmt.Sprintf("order=%d", args.Order), // plaintext: the boundary seals it
			}, nil
		}
		return mcp.TextResult("refunded, state " + p.RequestState), nil
	})
	return s
}

// Example_kmsCodec brings its own cryptography: a data key wrapped by a KMS
// and unwrapped once, at start-up. The codec only encrypts; the boundary
// still binds every token to its time window, request, audience and
// principal. Each refusal below gets the same wire error, and the log line
// says which check refused it: the codec's for an altered token, the
// boundary's for the rest.
func Example_kmsCodec() {
	ctx := context.Background()
	kms := newFakeKMS()
	wrapped := kms.GenerateDataKey() // from the service's configuration
	codec, err := newKMSCodec(ctx, kms, wrapped)
	if err != nil {
		fmt.Println(err)
		return
	}

	now := time.Date(2026, 7, 28, 9, 0, 0, 0, time.UTC)
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{} // keep the output stable
		}
		return a
	}}))
	policy := func() *requeststate.Policy {
		return &requeststate.Policy{Codec: codec, Logger: logger, Now: func() time.Time { return now }}
	}
	refunds := refundServer("refunds", policy())
	billing := refundServer("billing", policy()) // shares the data key, not the name

	alice := auth.WithInfo(ctx, &auth.Info{ClientID: "desk", Issuer: "https://id.example", Subject: "alice"})
	bob := auth.WithInfo(ctx, &auth.Info{ClientID: "desk", Issuer: "https://id.example", Subject: "bob"})

	// call sends tools/call refund for order with state (none when "") and
	// says what came back.
	call := func(ctx context.Context, s *server.Server, order int, state string) string {
		params := map[string]any{
			"_meta": map[string]any{
				mcp.MetaKeyProtocolVersion:    mcp.LatestVersion,
				mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}},
			},
			"name":      "refund",
			"arguments": map[string]any{"order": order},
		}
		if state != "" {
			params["requestState"] = state
			params["inputResponses"] = map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}
		}
		raw, err := json.Marshal(params)
		if err != nil {
			return err.Error()
		}
		res, err := s.Handle(ctx, &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: mcp.MethodCallTool, Params: raw}, nil)
		if err != nil {
			return "error: " + err.Error()
		}
		switch r := res.(type) {
		case *mcp.InputRequiredResult:
			return "input required, state " + r.RequestState
		case *mcp.CallToolResult:
			if t, ok := r.Content[0].(*mcp.TextContent); ok && len(r.Content) == 1 {
				return t.Text
			}
		}
		return fmt.Sprintf("unexpected result %T", res)
	}

	first := call(alice, refunds, 42, "")
	token, ok := strings.CutPrefix(first, "input required, state ")
	if !ok {
		fmt.Println(first)
		return
	}
	fmt.Println("round 1 sealed by the KMS codec:", strings.HasPrefix(token, kmsPrefix), "- plaintext visible:", strings.Contains(token, "order"))
	fmt.Println("round 2:", call(alice, refunds, 42, token))
	fmt.Println("other arguments:", call(alice, refunds, 43, token))
	fmt.Println("another user:", call(bob, refunds, 42, token))
	fmt.Println("another service:", call(alice, billing, 42, token))
	altered := []byte(token) // one letter of the body changed
	if i := len(altered) / 2; altered[i] == 'A' {
		altered[i] = 'B'
	} else {
		altered[i] = 'A'
	}
	fmt.Println("altered:", call(alice, refunds, 42, string(altered)))
	now = now.Add(requeststate.DefaultTTL)
	fmt.Println("ten minutes later:", call(alice, refunds, 42, token))
	fmt.Println("KMS calls:", kms.calls.Load())
	// Output:
	// round 1 sealed by the KMS codec: true - plaintext visible: false
	// round 2: refunded, state order=42
	// level=WARN msg="requeststate: rejected requestState" method=tools/call reason="bound to another request (method, target or arguments differ)"
	// other arguments: error: jsonrpc error -32602: Invalid or expired requestState
	// level=WARN msg="requeststate: rejected requestState" method=tools/call reason="principal mismatch"
	// another user: error: jsonrpc error -32602: Invalid or expired requestState
	// level=WARN msg="requeststate: rejected requestState" method=tools/call reason="audience mismatch"
	// another service: error: jsonrpc error -32602: Invalid or expired requestState
	// level=WARN msg="requeststate: rejected requestState" method=tools/call reason="kms1 authentication failed"
	// altered: error: jsonrpc error -32602: Invalid or expired requestState
	// level=WARN msg="requeststate: rejected requestState" method=tools/call reason=expired
	// ten minutes later: error: jsonrpc error -32602: Invalid or expired requestState
	// KMS calls: 1
}
