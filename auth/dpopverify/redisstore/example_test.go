package redisstore_test

import (
	"log"
	"os"

	"github.com/redis/go-redis/v9"

	"github.com/parley-mcp/parley/auth/dpopverify"
	"github.com/parley-mcp/parley/auth/dpopverify/redisstore"
	"github.com/parley-mcp/parley/auth/resourceserver"
)

// Every instance of a fleet records the DPoP proofs it accepts in one
// Redis, so a proof replayed to another instance is refused there too; the
// nonces need only the same key on every instance.
func Example() {
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR")})
	proofs, err := dpopverify.New(&dpopverify.Options{
		Replay:   redisstore.New(rdb, nil),
		NonceKey: []byte(os.Getenv("DPOP_NONCE_KEY")), // 32 bytes or more, the same everywhere
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = &resourceserver.Options{DPoP: proofs} // with the Metadata and Verifier
}
