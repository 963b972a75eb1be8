// Command apps is an MCP App: a Go server whose tool shows the person at
// the host a table of records, in a view the host renders in a sandboxed
// iframe, and whose view edits a record by calling an app-only tool back
// through the host.
//
// The server declares three things with package mcpserver:
//
//   - the view ui://records/table.html, a single HTML file embedded in the
//     program (view.html, plain JavaScript speaking the extension's
//     postMessage JSON-RPC; nothing to build);
//   - show_records, a tool whose results the view shows: its text is what
//     the model reads, its structuredContent the table the view draws;
//   - edit_record, a tool only the view may call (visibility "app"), which
//     renames a record and answers with the new table.
//
// Run without flags, a client in the same process plays the host: it
// lists the tools, reads the view, calls show_records, and calls
// edit_record as the view would; then a client without apps shows what a
// host that renders no views gets. With -serve-http it only serves, for a
// real host (a browser test drives it in make test; see
// docs/guide/apps.md):
//
//	go run ./examples/apps                           # host and server in one process
//	go run ./examples/apps -serve-http 127.0.0.1:8080 # serve at http://127.0.0.1:8080/mcp
//
// The last line printed is the answer to the view's edit.
package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/parley-mcp/parley/apps"
	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

//go:embed view.html
var views embed.FS

// viewURI is the view's address, which the tools name.
const viewURI = "ui://records/table.html"

// Record is one row of the table.
type Record struct {
	ID     int    `json:"id"`
	Title  string `json:"title"`
	Status string `json:"status"`
}

// Table is the structuredContent of both tools: what the view draws.
type Table struct {
	Records []Record `json:"records"`
}

// store holds the records. The server is one process; a fleet would keep
// them in a database.
type store struct {
	mu      sync.Mutex
	records []Record
}

func newStore() *store {
	return &store{records: []Record{
		{1, "Write the release notes", "open"},
		{2, "Fix the flaky test", "open"},
		{3, "Rotate the signing keys", "done"},
	}}
}

func (s *store) table() Table {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Table{Records: append([]Record(nil), s.records...)}
}

func (s *store) rename(id int, title string) (Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.records {
		if s.records[i].ID == id {
			s.records[i].Title = title
			return s.records[i], nil
		}
	}
	return Record{}, fmt.Errorf("there is no record %d", id)
}

// summary is the text the model reads: what the view shows, in words.
func (t Table) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d records:", len(t.Records))
	for _, r := range t.Records {
		fmt.Fprintf(&b, " #%d %q (%s);", r.ID, r.Title, r.Status)
	}
	return strings.TrimSuffix(b.String(), ";") + "."
}

type showArgs struct {
	Status string `json:"status,omitempty" jsonschema:"only records with this status (open or done); all when empty"`
}

type editArgs struct {
	ID    int    `json:"id" jsonschema:"the record to rename"`
	Title string `json:"title" jsonschema:"its new title" mcp:"minLength=1,maxLength=200"`
}

// newServer returns the records app.
func newServer(logger *slog.Logger) (*mcpserver.Server, *store, error) {
	s, err := mcpserver.New(mcp.Implementation{Name: "records", Version: "1.0.0"}, &mcpserver.Options{Logger: logger})
	if err != nil {
		return nil, nil, err
	}
	db := newStore()
	border := true
	if err := mcpserver.AddViewFile(s, &mcpserver.View{
		URI: viewURI, Name: "records-table", Title: "Records",
		Description: "The records as a table whose titles can be edited",
		UI:          apps.ResourceMeta{PrefersBorder: &border}, // no CSP domains: the page reaches nothing outside
	}, views, "view.html"); err != nil {
		return nil, nil, err
	}
	if err := mcpserver.AddAppTool(s, &mcp.Tool{Name: "show_records", Title: "Show records",
		Description: "Show the records, as a table the person can edit."},
		apps.ToolMeta{ResourceURI: viewURI},
		func(ctx context.Context, call *mcpserver.Call, a showArgs) (mcpserver.AppResult[Table], error) {
			t := db.table()
			if a.Status != "" {
				kept := t.Records[:0]
				for _, r := range t.Records {
					if r.Status == a.Status {
						kept = append(kept, r)
					}
				}
				t.Records = kept
			}
			text := t.summary()
			if call.RendersApps() {
				text += " They are shown to the person as an editable table."
			}
			return mcpserver.AppResult[Table]{Text: text, Data: t}, nil
		}); err != nil {
		return nil, nil, err
	}
	if err := mcpserver.AddAppTool(s, &mcp.Tool{Name: "edit_record", Title: "Rename a record",
		Description: "Rename a record; called by the records view when the person saves an edit."},
		apps.ToolMeta{ResourceURI: viewURI, Visibility: []apps.Visibility{apps.VisibilityApp}},
		func(ctx context.Context, call *mcpserver.Call, a editArgs) (mcpserver.AppResult[Table], error) {
			r, err := db.rename(a.ID, a.Title)
			if err != nil {
				return mcpserver.AppResult[Table]{}, err // an isError result the view shows
			}
			logger.Info("records: renamed", "id", r.ID, "title", r.Title)
			return mcpserver.AppResult[Table]{Text: fmt.Sprintf("Record %d is now %q.", r.ID, r.Title), Data: db.table()}, nil
		}); err != nil {
		return nil, nil, err
	}
	return s, db, nil
}

func main() {
	serveHTTP := flag.String("serve-http", "", "only serve the records app over Streamable HTTP at http://`ADDR`/mcp, until interrupted (port 0 picks one; the URL is printed)")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var err error
	if *serveHTTP != "" {
		err = serve(*serveHTTP, logger)
	} else {
		err = run(context.Background(), os.Stdout, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "apps:", err)
		os.Exit(1)
	}
}

// run plays the host in the same process: first one that renders apps,
// then one that does not.
func run(ctx context.Context, out io.Writer, logger *slog.Logger) error {
	s, _, err := newServer(logger)
	if err != nil {
		return err
	}
	info := mcp.Implementation{Name: "records-host", Version: "1.0.0"}
	host, err := client.New(info, &client.Options{
		Extensions: map[string]json.RawMessage{apps.ExtensionID: apps.ClientExtension()},
	}).Connect(ctx, s.InMemoryTransport())
	if err != nil {
		return err
	}
	defer host.Close()

	// The host finds the tools that have a view, and reads the view once.
	for tool, err := range host.Tools(ctx) {
		if err != nil {
			return err
		}
		m, ok, err := apps.ToolMetaOf(tool)
		if err != nil {
			return err
		}
		if ok {
			who := "the model and the view"
			if m.AppOnly() {
				who = "the view only"
			}
			fmt.Fprintf(out, "tool %s: view %s, called by %s\n", tool.Name, m.ResourceURI, who)
		}
	}
	res, err := host.ReadResource(ctx, viewURI)
	if err != nil {
		return err
	}
	view, err := apps.ViewOf(res, viewURI)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "view %s: %d bytes of %s, version %s, cacheable for %s (%s)\n",
		view.URI, len(view.HTML), view.MIMEType, view.Version, time.Duration(res.TTLMs)*time.Millisecond, res.CacheScope)

	// The model calls show_records; the host hands the result to the view.
	shown, err := host.CallTool(ctx, "show_records", nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "show_records, for the model: %s\n", text(shown))
	var table Table
	if _, err := shown.DecodeStructuredContent(&table); err != nil {
		return err
	}
	fmt.Fprintf(out, "show_records, for the view: %d records\n", len(table.Records))

	// A host without apps: no view, so no edit_record; the text is all.
	plain, err := client.New(info, nil).Connect(ctx, s.InMemoryTransport())
	if err != nil {
		return err
	}
	defer plain.Close()
	var names []string
	for tool, err := range plain.Tools(ctx) {
		if err != nil {
			return err
		}
		names = append(names, tool.Name)
	}
	fmt.Fprintf(out, "a host without apps lists: %s\n", strings.Join(names, ", "))

	// The person edits a title in the view, which calls edit_record
	// through the host.
	edited, err := host.CallTool(ctx, "edit_record", map[string]any{"id": 2, "title": "Fix the flaky test for good"})
	if err != nil {
		return err
	}
	if edited.IsError {
		return errors.New(text(edited))
	}
	fmt.Fprintf(out, "edit_record: %s\n", text(edited))
	return nil
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// serve serves the app at http://addr/mcp until interrupted. It prints the
// URL it serves first, so that a program that started it with port 0
// learns the port.
func serve(addr string, logger *slog.Logger) error {
	s, _, err := newServer(logger)
	if err != nil {
		return err
	}
	if err := s.Check(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	h := s.HTTPHandler(nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Printf("serving the records app at http://%s/mcp (interrupt to stop)\n", ln.Addr())
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	stop()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Shutdown(sctx); err != nil {
		return err
	}
	return srv.Shutdown(sctx)
}
