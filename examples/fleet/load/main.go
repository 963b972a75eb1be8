// Command load drives multi-round flows through a fleet of Parley servers
// and reports how they went. It is the load driver of examples/fleet.
//
// Flows mode (the default) runs concurrent provision calls against -url
// (the load balancer) until it has run -flows flows, -duration has passed,
// or it is interrupted (SIGINT or SIGTERM: flows in flight finish). Each
// flow takes two rounds, answered by the client's automatic loop, and
// counts as failed unless its result is exactly the one expected. The last
// line is
//
//	fleet: <flows> flows, <failed> failed, p50 <ms> ms, p99 <ms> ms
//
// and the exit status is 1 when any flow failed.
//
// Cross mode (-cross FROM,TO) begins a flow at one server and continues it
// at another, and reports whether the second accepted the first's state:
// it is how the fleet script shows a rotation done in the wrong order
// failing. With -expect refused the exit status is 0 only when the state
// was refused with the fixed requestState error.
//
// Replay mode (-replay URL,URL,...) completes one flow through -url, then
// sends its last round again to each listed server, and exits 0 only when
// every one refuses it: single-use state at work across the fleet.
//
// Tasks mode (-tasks N -instances NAME=URL,... [-kill NAME=PID]) runs the
// tasks extension across the fleet: see tasks.go.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8080/mcp", "the fleet's `URL` (the load balancer)")
	workers := flag.Int("workers", 8, "concurrent flows")
	flows := flag.Int("flows", 100000, "stop after this many flows")
	duration := flag.Duration("duration", 2*time.Minute, "stop after this long")
	cross := flag.String("cross", "", "begin at FROM and continue at TO (`FROM,TO`) instead of running flows")
	expect := flag.String("expect", "", "with -cross: accepted or refused")
	replay := flag.String("replay", "", "complete one flow, then replay its last round at each of these `URLs` (comma-separated)")
	nTasks := flag.Int("tasks", 0, "create `N` tasks through -url and see each to its end at -instances (tasks mode)")
	instances := flag.String("instances", "", "with -tasks: the instances, `NAME=URL,...`")
	kill := flag.String("kill", "", "with -tasks: kill instance `NAME=PID` once every task waits for its answer")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch {
	case *cross != "":
		err = runCross(ctx, *cross, *expect)
	case *nTasks > 0:
		err = runTasks(ctx, *url, strings.Split(*instances, ","), *nTasks, *kill)
	case *replay != "":
		err = runReplay(ctx, *url, strings.Split(*replay, ","))
	default:
		err = runFlows(ctx, *url, *workers, *flows, *duration)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// expected is the result every flow must end with.
const expected = "Provisioned orders (large) in eu-west-1."

// newClient answers the two questions of the provision tool by their
// wording, and declines anything else.
func newClient() *client.Client {
	return client.New(mcp.Implementation{Name: "fleet-load", Version: "1.0.0"}, &client.Options{
		Elicit: func(_ context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			form, ok := p.(*mcp.ElicitRequestFormParams)
			switch {
			case !ok:
			case strings.HasPrefix(form.Message, "Which region"):
				return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "eu-west-1"}}, nil
			case form.Message == "Which size in eu-west-1?":
				return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"size": "large"}}, nil
			}
			return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
		},
	})
}

func connect(ctx context.Context, url string) (*client.Session, error) {
	// Pinned to 2026-07-28: the fleet is stateless, so no instance holds a
	// session and any instance may take any round.
	c := newClient()
	return c.Connect(ctx, streamhttp.NewClientTransport(url, nil))
}

// resultText is the text of a tool result, or an error saying what came
// instead.
func resultText(res *mcp.CallToolResult) (string, error) {
	if res == nil || len(res.Content) != 1 {
		return "", fmt.Errorf("unexpected result %+v", res)
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", fmt.Errorf("unexpected content %T", res.Content[0])
	}
	if res.IsError {
		return "", fmt.Errorf("tool error: %s", text.Text)
	}
	return text.Text, nil
}

func oneFlow(ctx context.Context, sess *client.Session) error {
	res, err := sess.CallTool(ctx, "provision", map[string]string{"name": "orders"})
	if err != nil {
		return err
	}
	text, err := resultText(res)
	if err != nil {
		return err
	}
	if text != expected {
		return fmt.Errorf("result %q, want %q", text, expected)
	}
	return nil
}

func runFlows(ctx context.Context, url string, workers, limit int, duration time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, duration)
	defer cancel()
	var (
		started  atomic.Int64
		failed   atomic.Int64
		mu       sync.Mutex
		latency  []time.Duration
		firstErr []string
		wg       sync.WaitGroup
	)
	begin := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess, err := connect(context.Background(), url)
			if err != nil {
				failed.Add(1)
				mu.Lock()
				firstErr = append(firstErr, "connect: "+err.Error())
				mu.Unlock()
				return
			}
			defer sess.Close()
			for ctx.Err() == nil && started.Add(1) <= int64(limit) {
				t0 := time.Now()
				// A flow that has begun finishes even when the run
				// is stopped: stopping must not fail flows.
				fctx, fcancel := context.WithTimeout(context.Background(), 30*time.Second)
				err := oneFlow(fctx, sess)
				fcancel()
				d := time.Since(t0)
				mu.Lock()
				latency = append(latency, d)
				if err != nil {
					failed.Add(1)
					if len(firstErr) < 5 {
						firstErr = append(firstErr, err.Error())
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(begin)
	for _, e := range firstErr {
		fmt.Fprintln(os.Stderr, "load: failed flow:", e)
	}
	slices.Sort(latency)
	n := len(latency)
	fmt.Printf("load: %.0f flows/s over %s with %d workers\n", float64(n)/elapsed.Seconds(), elapsed.Round(time.Millisecond), workers)
	fmt.Printf("fleet: %d flows, %d failed, p50 %s ms, p99 %s ms\n", n, failed.Load(), ms(percentile(latency, 50)), ms(percentile(latency, 99)))
	if failed.Load() > 0 {
		return fmt.Errorf("%d flows failed", failed.Load())
	}
	if n == 0 {
		return errors.New("no flow ran")
	}
	return nil
}

func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i-1, 0)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }

// beginAt runs the first round of a flow at url and answers its question.
func beginAt(ctx context.Context, url string) (*client.Pending, mcp.InputResponses, error) {
	sess, err := connect(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	defer sess.Close()
	call, err := client.ToolCall("provision", map[string]string{"name": "orders"})
	if err != nil {
		return nil, nil, err
	}
	_, p, err := sess.Begin(ctx, call)
	if err != nil {
		return nil, nil, err
	}
	if p == nil {
		return nil, nil, errors.New("the server asked nothing")
	}
	answers, err := sess.Fulfil(ctx, p)
	return p, answers, err
}

// continueAt sends round p with answers to url.
func continueAt(ctx context.Context, url string, p *client.Pending, answers mcp.InputResponses) (mcp.AnyResult, *client.Pending, error) {
	sess, err := connect(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	defer sess.Close()
	return sess.Continue(ctx, p, answers)
}

func runCross(ctx context.Context, spec, expect string) error {
	from, to, ok := strings.Cut(spec, ",")
	if !ok {
		return errors.New("-cross wants FROM,TO")
	}
	p, answers, err := beginAt(ctx, from)
	if err != nil {
		return fmt.Errorf("round 1 at %s: %w", from, err)
	}
	_, _, err = continueAt(ctx, to, p, answers)
	switch {
	case err == nil:
		fmt.Printf("cross: %s accepted the state sealed by %s\n", to, from)
		if expect == "refused" {
			return errors.New("the state was accepted, want refused")
		}
	case mcp.IsInvalidRequestState(err):
		fmt.Printf("cross: %s refused the state sealed by %s: %v\n", to, from, err)
		if expect == "accepted" {
			return errors.New("the state was refused, want accepted")
		}
	default:
		return fmt.Errorf("round 2 at %s: %w", to, err)
	}
	return nil
}

func runReplay(ctx context.Context, url string, targets []string) error {
	p, answers, err := beginAt(ctx, url)
	if err != nil {
		return fmt.Errorf("round 1: %w", err)
	}
	res, next, err := continueAt(ctx, url, p, answers)
	if err != nil {
		return fmt.Errorf("round 2: %w", err)
	}
	if next == nil {
		return fmt.Errorf("round 2 completed the flow (%T); want a third round to replay", res)
	}
	answers2, err := func() (mcp.InputResponses, error) {
		sess, err := connect(ctx, url)
		if err != nil {
			return nil, err
		}
		defer sess.Close()
		return sess.Fulfil(ctx, next)
	}()
	if err != nil {
		return err
	}
	if _, _, err := continueAt(ctx, url, next, answers2); err != nil {
		return fmt.Errorf("last round: %w", err)
	}
	refused := 0
	for _, target := range targets {
		_, _, err := continueAt(ctx, target, next, answers2)
		switch {
		case mcp.IsInvalidRequestState(err):
			refused++
			fmt.Printf("replay: %s refused the spent round\n", target)
		case err == nil:
			fmt.Printf("replay: %s ACCEPTED the spent round\n", target)
		default:
			return fmt.Errorf("replay at %s: %w", target, err)
		}
	}
	if refused != len(targets) {
		return fmt.Errorf("%d of %d servers accepted a replayed round", len(targets)-refused, len(targets))
	}
	return nil
}
