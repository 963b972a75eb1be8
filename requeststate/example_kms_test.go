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
	"strings"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
)

// fakeKMS stands in for a key management service: it holds a key that
// never leaves it and unwraps data keys wrapped under it. A real one is a
// network call, which is why the codec below makes it once, at start-up.
type fakeKMS struct{ master cipher.AEAD }

func newFakeKMS() *fakeKMS {
	k := make([]byte, 32)
	rand.Read(k)
	block, _ := aes.NewCipher(k)
	gcm, _ := cipher.NewGCM(block)
	return &fakeKMS{master: gcm}
}

// GenerateDataKey returns a wrapped data key, as it would be stored in the
// service's configuration.
func (k *fakeKMS) GenerateDataKey() []byte {
	dataKey := make([]byte, 32)
	rand.Read(dataKey)
	nonce := make([]byte, k.master.NonceSize())
	rand.Read(nonce)
	return k.master.Seal(nonce, nonce, dataKey, nil)
}

// Decrypt unwraps a data key.
func (k *fakeKMS) Decrypt(wrapped []byte) ([]byte, error) {
	n := k.master.NonceSize()
	if len(wrapped) < n {
		return nil, errors.New("kms: bad ciphertext")
	}
	return k.master.Open(nil, wrapped[:n], wrapped[n:], nil)
}

// kmsCodec is envelope encryption: the data key is unwrapped once, and
// every token is sealed locally with AES-GCM. Tokens are "kms1." and
// unpadded base64url of nonce || ciphertext; the prefix is the format
// version and is bound as associated data, so a token cannot be passed off
// as another format's.
type kmsCodec struct{ aead cipher.AEAD }

const kmsPrefix = "kms1."

func newKMSCodec(kms *fakeKMS, wrappedKey []byte) (*kmsCodec, error) {
	dataKey, err := kms.Decrypt(wrappedKey)
	if err != nil {
		return nil, fmt.Errorf("unwrapping the requestState data key: %w", err)
	}
	block, err := aes.NewCipher(dataKey)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &kmsCodec{aead: gcm}, nil
}

func (c *kmsCodec) Seal(plaintext []byte) (string, error) {
	nonce := make([]byte, c.aead.NonceSize(), c.aead.NonceSize()+len(plaintext)+c.aead.Overhead())
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
	if err != nil || base64.RawURLEncoding.EncodeToString(raw) != body || len(raw) < c.aead.NonceSize() {
		return nil, &requeststate.InvalidStateError{Reason: "malformed kms1 token"}
	}
	n := c.aead.NonceSize()
	plain, err := c.aead.Open(nil, raw[:n], raw[n:], []byte(kmsPrefix))
	if err != nil {
		return nil, &requeststate.InvalidStateError{Reason: "kms1 authentication failed"}
	}
	return plain, nil
}

// Example_kmsCodec brings its own cryptography: a data key wrapped by a KMS,
// unwrapped once at start-up. The boundary still binds every token to its
// time window, request, audience and principal; the codec only encrypts.
func Example_kmsCodec() {
	kms := newFakeKMS()
	wrapped := kms.GenerateDataKey() // from the service's configuration
	codec, err := newKMSCodec(kms, wrapped)
	if err != nil {
		panic(err)
	}

	s := server.New(mcp.Implementation{Name: "refunds", Version: "1.0.0"}, nil)
	requeststate.MustProtect(s, &requeststate.Policy{Codec: codec, Logger: slog.New(slog.DiscardHandler)})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if p.RequestState == "" {
			return &mcp.InputRequiredResult{
				InputRequests: mcp.InputRequests{"confirm": mcp.NewElicitFormRequest("Refund order 42?", mcp.ElicitRequestedSchema{
					Properties: map[string]mcp.PrimitiveSchemaDefinition{"ok": &mcp.BooleanSchema{}},
				})},
				RequestState: "order=42", // plaintext: the boundary seals it
			}, nil
		}
		return mcp.TextResult("refunded, state " + p.RequestState), nil
	})

	call := func(state string) (mcp.AnyResult, error) {
		params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}},"name":"refund"`
		if state != "" {
			st, _ := json.Marshal(state)
			params += `,"requestState":` + string(st) + `,"inputResponses":{"confirm":{"action":"accept","content":{"ok":true}}}`
		}
		res, err := s.Handle(context.Background(), &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: "tools/call", Params: json.RawMessage(params + "}")}, nil)
		if err != nil {
			return nil, err
		}
		return res.(mcp.AnyResult), nil
	}

	first, _ := call("")
	token := first.(*mcp.InputRequiredResult).RequestState
	fmt.Println("sealed by the KMS codec:", strings.HasPrefix(token, kmsPrefix), strings.Contains(token, "order"))

	done, _ := call(token)
	fmt.Println(done.(*mcp.CallToolResult).Content[0].(*mcp.TextContent).Text)

	_, err = call(token + "A")
	fmt.Println("tampered:", err)
	// Output:
	// sealed by the KMS codec: true false
	// refunded, state order=42
	// tampered: jsonrpc error -32602: Invalid or expired requestState
}
