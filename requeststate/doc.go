// Package requeststate seals the requestState of multi-round-trip requests,
// so that what a client echoes back can be trusted as far as the server's
// own code is concerned.
//
// # Why
//
// A server that needs input mid-call answers tools/call, prompts/get or
// resources/read with an *mcp.InputRequiredResult carrying a requestState;
// the client sends it back on the retry. Between the two legs the client
// holds it, so what comes back is client input like any other: it may have
// been altered, kept past its time, or taken from another call, another
// tool or another user. A handler that keeps the round it reached, the
// answers so far or an order id in its state must not have to check all of
// that itself. The boundary does, for every handler at once.
//
// # What it does
//
// The boundary is the server's sealing step (server.StateSealer), which
// runs outside every middleware. On the way out, it seals the requestState
// of every input_required result into an opaque, encrypted token. On the
// way in, it verifies every requestState on the three carrier methods
// (also for handlers that never issue state, and also an empty one:
// "requestState":"" is a state, which no token is) and hands middleware
// and handlers its plaintext, and what the token proved
// (server.Request.StateProof). Middleware and handlers write and read
// plaintext and never see a token, whatever the order they were added in.
//
// Each token carries claims the boundary checks on every echo:
//
//   - a time window: issued at, expires at (TTL default [DefaultTTL], ten
//     minutes; every round seals afresh, so it bounds one round's think
//     time, not the flow), with [ClockSkew] of allowance for issuers whose
//     clock runs ahead;
//   - the request: method, target (tool name, prompt name or resource URI)
//     and a canonical digest of the arguments, so state replayed onto
//     another tool, other arguments or another method is refused;
//   - the audience: the server's name unless the Policy names another, so
//     two services that happen to share a key do not accept each other's
//     state;
//   - the principal: by default the client, issuer and subject of the
//     validated access token ([AuthPrincipal]), or whatever a
//     [Policy.Principal] hook returns; salted per token, so tokens of one
//     principal cannot be linked to each other;
//   - the questions of the round: the key and a digest of each input
//     request. Answers in inputResponses under keys the round did not ask
//     are dropped before the handler runs, and [Asked] tells a handler
//     whether the answer under a key responds to exactly the question it
//     is about to ask (the same message and schema).
//
// Every refusal, whatever its cause, is the same wire error:
//
//	{"code": -32602, "message": "Invalid or expired requestState"}
//
// The true reason goes to the log at Warn level, without the token, the
// plaintext or the principal. In practice the most common one is no attack
// at all: a retry that reached an instance without the key (another
// replica, or this one after a restart). The client starts the flow again
// ([mcp.IsInvalidRequestState] recognises the error); shared keys are the fix.
//
// # Attaching it
//
// The low-level server seals nothing until asked. One line opts in:
//
//	requeststate.MustProtect(s, nil) // one process: a random key, made now
//
// Several instances behind a load balancer, or a server whose flows must
// survive restarts, share a key ring instead, and share the server name (or
// set one Audience):
//
//	keys, err := requeststate.ParseKeys(os.Getenv("MCP_STATE_KEYS"))
//	...
//	err = requeststate.Protect(s, &requeststate.Policy{Keys: keys})
//
// # Keys and rotation
//
// keys[0] seals; every key in the ring unseals. Rotate in three phases,
// each rolled out to every instance before the next starts:
//
//  1. [OLD, NEW]: every instance learns to verify NEW; OLD still seals.
//  2. [NEW, OLD]: NEW seals; state in flight under OLD still verifies.
//  3. [NEW], one TTL after phase 2 is complete everywhere: OLD retires.
//
// Never promote the new key to keys[0] first: instances that do not have it
// yet would refuse every token it seals.
//
// # Single use
//
// By default a token may be echoed again within its TTL. With
// Policy.SingleUse set, each sealed round is accepted at most once by all
// the instances sharing the [SingleUseStore]: [MemoryStore] for one
// process, package requeststate/redisstore for a fleet. A token is used up
// only after it passed every other check, so a forged or misdirected
// request cannot burn a valid state; a replay gets the fixed rejection, and a
// store that cannot answer refuses the state. Policy.Rejected sees every
// refusal with its reason and Go error, which matches [ErrReplayed] or
// [ErrStoreUnavailable] for these two.
//
// A store that implements [CallerStore], as [MemoryStore] does, gives each
// caller (the principal, else the client's address) its own share, so
// that one client burning rounds fills only its share and is refused
// alone ([ErrCallerShareFull]); MemoryStoreOptions says how to size it.
//
// # Your own cryptography
//
// A [Codec] replaces the built-in AES-256-GCM codec: give Policy.Codec
// instead of Keys. The boundary still stamps and checks every claim above;
// the codec only has to refuse, with [ErrInvalidState], every token it did
// not mint unmodified. See the KMS example.
package requeststate
