// Command instance is one server of the fleet in examples/fleet: the
// provisioner tool (two questions, asked over two rounds) served over
// stateless Streamable HTTP, with its requestState sealed under a key ring
// that every instance of the fleet shares.
//
//	go run ./examples/fleet/instance -addr 127.0.0.1:8081 -keys-file keys.txt
//
// The key ring is read once, at start-up, from -keys-file or, without it,
// from PARLEY_STATE_KEYS: base64 keys separated by commas or white space,
// the sealing key first (requeststate.ParseKeys). A rotation is a rolling
// restart of every instance with the next phase's ring (see
// docs/guide/fleet.md). With -redis, every sealed round is single-use
// across the fleet, and the instance also serves the tasks extension from
// that Redis: its "job" tool runs as a task that asks one question, and
// any instance answers for the task of any other (design record 028). The instance serves /mcp, and /healthz for the
// script that starts it; on SIGTERM it stops accepting, finishes the
// requests in flight and exits 0.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/requeststate/redisstore"
	"github.com/parley-mcp/parley/tasks"
	taskstore "github.com/parley-mcp/parley/tasks/redisstore"
	"github.com/redis/go-redis/v9"
)

// keysEnv is the variable the key ring is read from when -keys-file is not
// given.
const keysEnv = "PARLEY_STATE_KEYS"

type provisionArgs struct {
	Name string `json:"name" jsonschema:"the database to create"`
}

type regionForm struct {
	Region string `json:"region" jsonschema:"where the database lives"`
}

type sizeForm struct {
	Size string `json:"size" jsonschema:"small, medium or large"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen `ADDR`ess (loopback)")
	keysFile := flag.String("keys-file", "", "read the key ring from `FILE` (default: $"+keysEnv+")")
	ttl := flag.Duration("ttl", requeststate.DefaultTTL, "how long a sealed requestState stays valid")
	name := flag.String("name", "instance", "this instance's `NAME`, for its log lines")
	redisAddr := flag.String("redis", "", "make every sealed round single-use, and keep tasks, in the Redis server at `ADDR` that all instances share")
	lease := flag.Duration("task-lease", 2*time.Second, "with -redis: how long a task outlives its instance's last lease renewal")
	flag.Parse()
	if err := run(*addr, *keysFile, *ttl, *name, *redisAddr, *lease); err != nil {
		fmt.Fprintf(os.Stderr, "instance %s: %v\n", *name, err)
		os.Exit(1)
	}
}

func run(addr, keysFile string, ttl time.Duration, name, redisAddr string, lease time.Duration) error {
	keys, err := loadKeys(keysFile)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("instance", name)
	// Every instance has the same server name: it is the audience the
	// sealed state is bound to, so that any instance verifies any other's.
	policy := &requeststate.Policy{Keys: keys, TTL: ttl, Logger: logger}
	var taskOpts *tasks.Options
	if redisAddr != "" {
		// Single-use state: a round is accepted once, by whichever
		// instance sees it first; a replay is refused on every instance.
		rdb := redis.NewClient(&redis.Options{Addr: redisAddr})
		defer rdb.Close()
		policy.SingleUse = redisstore.New(rdb, nil)
		// Tasks in the same Redis: any instance serves any task.
		taskOpts = &tasks.Options{Store: taskstore.New(rdb, nil), Lease: lease, Instance: name, PollInterval: 100 * time.Millisecond, Logger: logger}
	}
	s, err := mcpserver.New(mcp.Implementation{Name: "fleet-provisioner", Version: "1.0.0"}, &mcpserver.Options{
		Logger:       logger,
		RequestState: policy,
		Tasks:        taskOpts,
	})
	if err != nil {
		return err
	}
	if err := addProvision(s); err != nil {
		return err
	}
	if taskOpts != nil {
		if err := addJob(s, name); err != nil {
			return err
		}
	}

	mux := http.NewServeMux()
	h := s.HTTPHandler(nil)
	mux.Handle("/mcp", h)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	srv := &http.Server{
		Handler: mux,
		// Bounds on the slow parts of a connection; no WriteTimeout,
		// which would cut event streams (docs/guide/fleet.md).
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       60 * time.Second,
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	logger.Warn("serving", "url", "http://"+ln.Addr().String()+"/mcp", "keys", len(keys))
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The MCP handler first: it ends the streams and sessions that would
	// keep srv.Shutdown waiting, and refuses new requests (503, which
	// nginx passes on) while the ones in progress finish.
	if err := h.Shutdown(sctx); err != nil {
		return err
	}
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// loadKeys reads the ring from path, or from the environment.
func loadKeys(path string) ([][]byte, error) {
	text := os.Getenv(keysEnv)
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		text = string(data)
	}
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("no key ring: give -keys-file or set %s", keysEnv)
	}
	return requeststate.ParseKeys(text)
}

// addProvision adds the tool: the size question names the region, so the
// two are asked in two rounds, and round 2 may reach another instance.
func addProvision(s *mcpserver.Server) error {
	region := mcpserver.Elicit[regionForm]("region", func(a provisionArgs, _ *mcpserver.Call) string {
		return "Which region should " + a.Name + " live in?"
	})
	size := mcpserver.Elicit[sizeForm]("size", func(a provisionArgs, c *mcpserver.Call) string {
		return "Which size in " + region.Get(c).Region + "?"
	}, region)
	return mcpserver.AddTool(s, &mcp.Tool{Name: "provision", Description: "Create a database; asks where and how large."},
		func(ctx context.Context, c *mcpserver.Call, a provisionArgs) (string, error) {
			return fmt.Sprintf("Provisioned %s (%s) in %s.", a.Name, size.Get(c).Size, region.Get(c).Region), nil
		}, region, size)
}

type jobArgs struct {
	N int `json:"n" jsonschema:"the job's number"`
}

var goOnSchema = mcp.ElicitRequestedSchema{
	Properties: map[string]mcp.PrimitiveSchemaDefinition{"ok": &mcp.BooleanSchema{}},
	Required:   []string{"ok"},
}

// addJob adds the task tool: it asks whether to go on, naming the instance
// that runs it (the load driver learns the owner from the question), and
// completes with who ran it and what was answered.
func addJob(s *mcpserver.Server, name string) error {
	return mcpserver.AddTaskTool(s, &mcp.Tool{Name: "job", Description: "A long job that asks once."}, mcpserver.TaskRequired,
		func(ctx context.Context, c *mcpserver.Call, a jobArgs) (string, error) {
			run := tasks.FromContext(ctx)
			if run == nil {
				return "", errors.New("job runs only as a task")
			}
			answers, err := run.Ask(ctx, mcp.InputRequests{
				"go": mcp.NewElicitFormRequest(fmt.Sprintf("instance %s: go on with job %d?", name, a.N), goOnSchema),
			})
			if err != nil {
				return "", err
			}
			var form struct {
				OK bool `json:"ok"`
			}
			if r, err := answers.Elicit("go"); err != nil || !r.Accepted() || r.DecodeContent(&form) != nil || !form.OK {
				return fmt.Sprintf("job %d stopped by %s", a.N, name), nil
			}
			return fmt.Sprintf("job %d done", a.N), nil
		})
}
