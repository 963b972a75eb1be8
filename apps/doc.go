// Package apps is the MCP Apps extension (io.modelcontextprotocol/ui,
// SEP-1865): a tool names a view, an HTML page served as a ui:// resource,
// and a host that renders apps shows the page in a sandboxed iframe and
// hands it the tool's result. The page may call the server's tools back
// through the host, among them tools only the page may call.
//
// The package holds the extension's wire facts, typed: the tool's _meta.ui
// ([ToolMeta]: the view's URI and who may call the tool), the view's
// _meta.ui ([ResourceMeta]: its Content Security Policy domains, the
// browser permissions it asks for, a dedicated origin, a border), the MIME
// type ([MIMEType]), the deprecated flat key some hosts still read
// ([LegacyResourceURIKey], written beside _meta.ui by [SetToolMeta]),
// ui:// URIs checked by [CheckURI], and negotiation ([Declared],
// [RendersApps], [ClientExtension]).
//
// It is built only on the extension surface every extension has
// (server.DeclareExtension and the capabilities a request carries; design
// records 026 and 047), as package tasks is. Package mcpserver registers
// apps in one call each:
//
//	mcpserver.AddView(s, &mcpserver.View{URI: "ui://records/table.html", Name: "records"}, tableHTML)
//	mcpserver.AddAppTool(s, &mcp.Tool{Name: "show_records"}, apps.ToolMeta{ResourceURI: "ui://records/table.html"},
//		func(ctx context.Context, call *mcpserver.Call, in Query) (mcpserver.AppResult[Table], error) {
//			t := load(in)
//			return mcpserver.AppResult[Table]{Text: t.Summary(), Data: t}, nil
//		})
//
// A client that renders apps declares the extension
// (client.Options.Extensions: [ClientExtension]), finds the view of a
// listed tool with [ToolMetaOf] and reads it with resources/read, whose
// result [ViewOf] turns into the page and its metadata.
package apps
