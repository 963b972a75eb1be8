package redisstore_test

import (
	"log"
	"os"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/requeststate/redisstore"
	"github.com/parley-mcp/parley/server"
	"github.com/redis/go-redis/v9"
)

// A fleet: every instance shares the key ring, the server name and one
// Redis, so each sealed round is accepted once across all of them.
func Example() {
	keys, err := requeststate.ParseKeys(os.Getenv("MCP_STATE_KEYS"))
	if err != nil {
		log.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR")})
	s := server.New(mcp.Implementation{Name: "payments", Version: "1.0.0"}, nil)
	requeststate.MustProtect(s, &requeststate.Policy{
		Keys:      keys,
		SingleUse: redisstore.New(rdb, &redisstore.Options{Prefix: "payments:used:"}),
	})
}
