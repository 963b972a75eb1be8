package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/parley-mcp/parley/apps"
	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
)

// The MCP Apps extension in parley (package apps): parley renders no
// views, so it declares the extension only for the apps commands, which
// look at a server as a host that renders them would.

// declaringApps marks the context of an apps command's session.
type declaringApps struct{}

// withApps returns ctx for opening a session that declares the apps
// extension.
func withApps(ctx context.Context) context.Context {
	return context.WithValue(ctx, declaringApps{}, true)
}

// sessionExtensions are the extensions a session opened with ctx
// declares: the apps extension for the apps commands, none otherwise.
func sessionExtensions(ctx context.Context) map[string]json.RawMessage {
	if ctx.Value(declaringApps{}) == nil {
		return nil
	}
	return map[string]json.RawMessage{apps.ExtensionID: apps.ClientExtension()}
}

// describeApp is the VIEW column of tools list and apps list: the view's
// URI, and who may call the tool when that is not both.
func describeApp(m apps.ToolMeta) string {
	s := dash(m.ResourceURI)
	switch {
	case m.AppOnly():
		s += " (app only)"
	case !m.CallableByApp():
		s += " (model only)"
	}
	return s
}

// appToolDoc is the JSON form of one row of apps list.
type appToolDoc struct {
	Name        string            `json:"name"`
	View        string            `json:"view,omitempty"`
	Visibility  []apps.Visibility `json:"visibility,omitempty"`
	Description string            `json:"description,omitempty"`
}

func runAppsList(ctx context.Context, a *app, args []string) error {
	if err := noArgs(args); err != nil {
		return err
	}
	sess, err := a.session(withApps(ctx))
	if err != nil {
		return err
	}
	tools, err := collect(sess.Tools(ctx))
	if err != nil {
		return err
	}
	var rows []appToolDoc
	for i := range tools {
		m, ok, err := apps.ToolMetaOf(&tools[i])
		if err != nil {
			return &client.InvalidResponseError{Method: mcp.MethodListTools, Err: err}
		}
		if ok {
			rows = append(rows, appToolDoc{tools[i].Name, m.ResourceURI, m.Visibility, firstLine(tools[i].Description)})
		}
	}
	return printList(a, "tools", "app tools", "NAME\tVIEW\tDESCRIPTION", rows,
		"(parley apps view URI shows a view; app-only tools are for views to call)",
		func(d appToolDoc) []string {
			return []string{d.Name, describeApp(apps.ToolMeta{ResourceURI: d.View, Visibility: d.Visibility}), d.Description}
		})
}

// viewDoc is the JSON form of apps view.
type viewDoc struct {
	URI        string             `json:"uri"`
	MIMEType   string             `json:"mimeType"`
	Size       int                `json:"size"`
	Version    string             `json:"version,omitempty"`
	TTLMs      *int64             `json:"ttlMs,omitempty"`
	CacheScope mcp.CacheScope     `json:"cacheScope,omitempty"`
	UI         *apps.ResourceMeta `json:"ui,omitempty"`
	File       string             `json:"file"`
}

func runAppsView(ctx context.Context, a *app, args []string) error {
	if len(args) != 1 {
		return usagef("apps view needs one ui:// URI")
	}
	uri := args[0]
	if err := apps.CheckURI(uri); err != nil {
		return &usageError{err}
	}
	sess, err := a.session(withApps(ctx))
	if err != nil {
		return err
	}
	res, err := sess.ReadResource(ctx, uri)
	a.progress.done(a.stderr)
	if err != nil {
		return err
	}
	v, err := apps.ViewOf(res, uri)
	if err != nil {
		return &client.InvalidResponseError{Method: mcp.MethodReadResource, Err: err}
	}
	file, err := a.save(baseName(uri, 1), "text/html", []byte(v.HTML))
	if err != nil {
		return err
	}
	doc := viewDoc{URI: uri, MIMEType: v.MIMEType, Size: len(v.HTML), Version: v.Version, UI: v.Meta, File: file}
	if sess.ProtocolVersion().SupportsInputRequired() { // 2026-07-28: the read is cacheable
		doc.TTLMs, doc.CacheScope = &res.TTLMs, res.CacheScope
	}
	if a.opts.jsonOut {
		return a.writeJSON(doc)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "View:\t%s\n", uri)
	// What the server chose is printed with its control characters
	// made visible (peerLine), as everywhere.
	fmt.Fprintf(tw, "Type:\t%s, %d bytes\n", peerLine(v.MIMEType), len(v.HTML))
	fmt.Fprintf(tw, "Version:\t%s\n", peerLine(dash(v.Version)))
	if doc.TTLMs != nil {
		fmt.Fprintf(tw, "Cache:\t%d ms, %s\n", *doc.TTLMs, peerLine(dash(string(doc.CacheScope))))
	}
	m := v.Meta
	if m == nil {
		m = &apps.ResourceMeta{}
	}
	border := "host decides"
	if m.PrefersBorder != nil {
		border = "no"
		if *m.PrefersBorder {
			border = "yes"
		}
	}
	fmt.Fprintf(tw, "Border:\t%s\n", border)
	fmt.Fprintf(tw, "Domain:\t%s\n", peerLine(dash(m.Domain)))
	csp := m.CSP
	if csp == nil {
		csp = &apps.CSP{}
	}
	fmt.Fprintf(tw, "Connects to:\t%s\n", peerLine(list(csp.ConnectDomains)))
	fmt.Fprintf(tw, "Loads from:\t%s\n", peerLine(list(csp.ResourceDomains)))
	fmt.Fprintf(tw, "Frames:\t%s\n", peerLine(list(csp.FrameDomains)))
	fmt.Fprintf(tw, "Base URIs:\t%s\n", peerLine(list(csp.BaseURIDomains)))
	var perms []string
	if p := m.Permissions; p != nil {
		for name, on := range map[string]bool{"camera": p.Camera, "microphone": p.Microphone, "geolocation": p.Geolocation, "clipboard-write": p.ClipboardWrite} {
			if on {
				perms = append(perms, name)
			}
		}
	}
	fmt.Fprintf(tw, "Permissions:\t%s\n", list(perms))
	fmt.Fprintf(tw, "Page:\tsaved to %s\n", peerLine(file))
	return tw.Flush()
}

// list is a comma-separated list in a stable order, or "-".
func list(items []string) string {
	if len(items) == 0 {
		return "-"
	}
	s := slices.Clone(items)
	slices.Sort(s)
	return strings.Join(s, ", ")
}

// appViews returns the VIEW column of tools list by tool name, or nil
// when no tool has apps metadata (the table then has no such column). A
// tool whose metadata does not decode is marked so, not hidden.
func appViews(tools []mcp.Tool) map[string]string {
	var views map[string]string
	for i := range tools {
		m, ok, err := apps.ToolMetaOf(&tools[i])
		if !ok && err == nil {
			continue
		}
		if views == nil {
			views = make(map[string]string, len(tools))
		}
		if err != nil {
			views[tools[i].Name] = "(invalid _meta.ui)"
			continue
		}
		views[tools[i].Name] = describeApp(m)
	}
	if views == nil {
		return nil
	}
	for i := range tools {
		if _, ok := views[tools[i].Name]; !ok {
			views[tools[i].Name] = "-"
		}
	}
	return views
}
