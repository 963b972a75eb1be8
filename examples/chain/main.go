// Command chain shows the client's round limit ending a call that asks too
// many questions one after another.
//
// The server's "chain" tool declares 11 Elicit questions, each after the
// one before it (question i depends on question i-1, and its message
// quotes the previous answer). A question is asked only once everything it
// depends on is answered, so the chain takes one round per question: 11
// rounds. The client allows 10 input_required results per call (the
// default of client.LoopOptions.MaxRounds), so it answers rounds 1 to 10
// and, when the server asks an 11th time, stops with a
// *client.RoundsExceededError instead of answering. The error carries the
// round it refused (Last), which a caller could persist and resume.
//
// The program prints every round, checks with errors.As that the call
// failed with exactly that error after exactly 10 answered rounds, prints
// it, and exits 0. It exits 1 if the call succeeds or fails any other way.
//
// Server and client run in one process, over s.InMemoryTransport().
//
//	go run ./examples/chain
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

// links is how many questions the chain asks: one more than the client's
// default round limit.
const links = 11

// chainArgs are the tool's arguments: none.
type chainArgs struct{}

// stepForm is the form of every question.
type stepForm struct {
	Word string `json:"word" jsonschema:"the next word of the chain"`
}

// chainQuestions returns the questions step1 ... step11, each after the
// one before.
func chainQuestions() []*mcpserver.ElicitQuestion[stepForm] {
	qs := make([]*mcpserver.ElicitQuestion[stepForm], links)
	for i := range qs {
		key := "step" + strconv.Itoa(i+1)
		if i == 0 {
			qs[i] = mcpserver.Elicit[stepForm](key, func(chainArgs, *mcpserver.Call) string {
				return "Step 1: say a word."
			})
			continue
		}
		prev := qs[i-1]
		qs[i] = mcpserver.Elicit[stepForm](key, func(_ chainArgs, c *mcpserver.Call) string {
			return fmt.Sprintf("Step %d: the last word was %q; say the next one.", i+1, prev.Get(c).Word)
		}, prev)
	}
	return qs
}

func newServer() (*mcpserver.Server, error) {
	s, err := mcpserver.New(mcp.Implementation{Name: "chain-server", Version: "1.0.0"}, &mcpserver.Options{
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return nil, err
	}
	qs := chainQuestions()
	err = mcpserver.AddTool(s, &mcp.Tool{Name: "chain", Description: "Ask for words one at a time, " + strconv.Itoa(links) + " in all."},
		func(ctx context.Context, c *mcpserver.Call, _ chainArgs) (string, error) {
			words := make([]string, len(qs))
			for i, q := range qs {
				words[i] = q.Get(c).Word
			}
			return "The chain: " + strings.Join(words, " "), nil
		}, qs[len(qs)-1]) // the last question brings the rest with it
	return s, err
}

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "chain:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	s, err := newServer()
	if err != nil {
		return err
	}
	var answered atomic.Int32 // rounds whose questions the client answered
	c := client.New(mcp.Implementation{Name: "chain-client", Version: "1.0.0"}, &client.Options{
		// Answers a word form with the next word; declines a URL or a form
		// it does not know.
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			switch p := p.(type) {
			case *mcp.ElicitRequestFormParams:
				if _, ok := p.RequestedSchema.Properties["word"]; ok {
					n := answered.Add(1)
					return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"word": "w" + strconv.Itoa(int(n))}}, nil
				}
				fmt.Printf("  an unknown form %q: declined\n", p.Message)
			case *mcp.ElicitRequestURLParams:
				fmt.Printf("  a URL to open (%s): declined\n", p.URL)
			}
			return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
		},
		// MaxRounds is left at its default, 10.
		Loop: &client.LoopOptions{OnRound: func(ctx context.Context, p *client.Pending) error {
			for _, key := range p.InputRequests.Keys() {
				fmt.Printf("round %2d: %s %s\n", p.Round, key, describe(p.InputRequests[key]))
			}
			return nil
		}},
	})
	sess, err := c.Connect(ctx, s.InMemoryTransport())
	if err != nil {
		return err
	}
	defer sess.Close()

	res, err := sess.CallTool(ctx, "chain", nil)
	if err == nil {
		return fmt.Errorf("the call went through %d questions with a limit of 10 rounds: %s", links, resultText(res))
	}
	var limit *client.RoundsExceededError
	if !errors.As(err, &limit) {
		return fmt.Errorf("the call failed, but not on the round limit: %w", err)
	}
	if n := answered.Load(); n != 10 || limit.Rounds != 10 {
		return fmt.Errorf("the limit ended the call after %d answered rounds (limit %d), want 10", n, limit.Rounds)
	}
	fmt.Printf("the client answered %d rounds and refused round %d, which asks for %v\n",
		answered.Load(), limit.Last.Round, limit.Last.InputRequests.Keys())
	fmt.Printf("the call failed as expected with %T: %v\n", limit, limit)
	return sess.Close()
}

// describe says what an input request asks, for the round log.
func describe(r mcp.InputRequest) string {
	if e, ok := r.(*mcp.ElicitRequest); ok {
		if f, ok := e.Params.(*mcp.ElicitRequestFormParams); ok {
			return strconv.Quote(f.Message)
		}
	}
	return "asks for " + r.Method()
}

func resultText(r *mcp.CallToolResult) string {
	var parts []string
	for _, b := range r.Content {
		if t, ok := b.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}
