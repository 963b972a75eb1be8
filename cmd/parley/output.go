package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
)

// writeJSON prints v as one indented JSON document: the MCP encoding of
// the result, so its members come in the schema's order every time.
func (a *app) writeJSON(v any) error {
	raw, err := mcp.Marshal(v)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err = a.stdout.Write(buf.Bytes())
	return err
}

// infoDoc is the JSON form of info.
type infoDoc struct {
	ProtocolVersion   mcp.ProtocolVersion     `json:"protocolVersion"`
	ServerInfo        *mcp.Implementation     `json:"serverInfo,omitempty"`
	SupportedVersions []mcp.ProtocolVersion   `json:"supportedVersions,omitempty"`
	Capabilities      *mcp.ServerCapabilities `json:"capabilities,omitempty"`
	Instructions      string                  `json:"instructions,omitempty"`
}

func (a *app) printInfo(sess *client.Session, d *mcp.DiscoverResult) error {
	doc := infoDoc{
		ProtocolVersion:   sess.ProtocolVersion(),
		ServerInfo:        sess.ServerInfo(),
		SupportedVersions: d.SupportedVersions,
		Capabilities:      &d.Capabilities,
		Instructions:      d.Instructions,
	}
	if a.opts.jsonOut {
		return a.writeJSON(doc)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	if si := doc.ServerInfo; si != nil {
		name := peerLine(si.Name) + " " + peerLine(si.Version)
		if si.Title != "" {
			name += " (" + peerLine(si.Title) + ")"
		}
		fmt.Fprintf(tw, "Server:\t%s\n", name)
	}
	fmt.Fprintf(tw, "Protocol:\t%s (%s)\n", doc.ProtocolVersion, eraName(doc.ProtocolVersion))
	if len(doc.SupportedVersions) > 0 {
		vs := make([]string, len(doc.SupportedVersions))
		for i, v := range doc.SupportedVersions {
			vs[i] = string(v)
		}
		fmt.Fprintf(tw, "Versions:\t%s\n", peerLine(strings.Join(vs, ", ")))
	}
	fmt.Fprintf(tw, "Offers:\t%s\n", describeCapabilities(&d.Capabilities))
	if exts := slices.Sorted(mapsKeys(d.Capabilities.Extensions)); len(exts) > 0 {
		fmt.Fprintf(tw, "Extensions:\t%s\n", peerLine(strings.Join(exts, ", ")))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if d.Instructions != "" {
		fmt.Fprintf(a.stdout, "Instructions:\n%s\n", indent(a.wrap(peerText(d.Instructions), 2), "  "))
	}
	return nil
}

func eraName(v mcp.ProtocolVersion) string {
	if v.Era() == mcp.EraLegacy {
		return "legacy: initialize and a session"
	}
	return "stateless"
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func describeCapabilities(c *mcp.ServerCapabilities) string {
	var parts []string
	add := func(name string, flags ...string) {
		if len(flags) > 0 {
			name += " (" + strings.Join(flags, ", ") + ")"
		}
		parts = append(parts, name)
	}
	if c.Tools != nil {
		add("tools", capFlag(c.Tools.ListChanged, "listChanged")...)
	}
	if c.Prompts != nil {
		add("prompts", capFlag(c.Prompts.ListChanged, "listChanged")...)
	}
	if c.Resources != nil {
		add("resources", append(capFlag(c.Resources.Subscribe, "subscribe"), capFlag(c.Resources.ListChanged, "listChanged")...)...)
	}
	if c.Completions != nil {
		add("completions")
	}
	if c.Logging != nil {
		add("logging")
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

func capFlag(on bool, name string) []string {
	if on {
		return []string{name}
	}
	return nil
}

func (a *app) printTools(tools []mcp.Tool) error {
	if views := appViews(tools); views != nil {
		return printList(a, "tools", "tools", "NAME\tARGUMENTS\tVIEW\tDESCRIPTION", tools,
			"(* required; parley --json tools list shows the input schemas; parley apps view URI shows a view)",
			func(t mcp.Tool) []string {
				return []string{t.Name, describeArguments(t.InputSchema), views[t.Name], firstLine(t.Description)}
			})
	}
	return printList(a, "tools", "tools", "NAME\tARGUMENTS\tDESCRIPTION", tools,
		"(* required; parley --json tools list shows the input schemas)",
		func(t mcp.Tool) []string {
			return []string{t.Name, describeArguments(t.InputSchema), firstLine(t.Description)}
		})
}

// printList prints items as one JSON object with them under key (--json),
// or as a table: header, a row each, then footer ("" for none); with no
// items, "(no what)".
func printList[T any](a *app, key, what, header string, items []T, footer string, row func(T) []string) error {
	if a.opts.jsonOut {
		return a.writeJSON(map[string]any{key: orEmpty(items)})
	}
	if len(items) == 0 {
		fmt.Fprintf(a.stdout, "(no %s)\n", what)
		return nil
	}
	rows := [][]string{strings.Split(header, "\t")}
	for _, it := range items {
		rows = append(rows, tableCells(row(it)))
	}
	if _, err := io.WriteString(a.stdout, renderTable(rows, a.width)); err != nil {
		return err
	}
	if footer != "" {
		fmt.Fprintln(a.stdout, footer)
	}
	return nil
}

// tableCells makes a row's cells safe to print on one line (they are a
// server's names and descriptions): a tab or line break a server put in a
// name stays in its cell, as a space, and moves no text into the next
// column.
func tableCells(cells []string) []string {
	for i, c := range cells {
		cells[i] = peerLine(c)
	}
	return cells
}

// tableGap is the space between two columns of a table.
const tableGap = 2

// renderTable lays rows out in columns, the first row being the header.
// Each column is as wide as its widest cell, and the last is not padded.
// Given the terminal's width (0: no terminal), a table wider than it is
// made to fit: the last column (a description) gives way first, down to
// 20 columns, then the widest column, down to 8; a cut cell ends in "…".
func renderTable(rows [][]string, width int) string {
	n := 0
	for _, r := range rows {
		n = max(n, len(r))
	}
	widths := make([]int, n)
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	if width > 0 {
		fitColumns(widths, width)
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			c = clip(c, widths[i])
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+tableGap))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// fitColumns narrows widths until the columns, with their gaps, fit in
// width, or can give no more.
func fitColumns(widths []int, width int) {
	total := func() int {
		t := tableGap * (len(widths) - 1)
		for _, w := range widths {
			t += w
		}
		return t
	}
	const minLast, minOther = 20, 8
	last := len(widths) - 1
	if over := total() - width; over > 0 && widths[last] > minLast {
		widths[last] -= min(over, widths[last]-minLast)
	}
	for total() > width {
		widest := -1
		for i, w := range widths {
			if w > minOther && (widest < 0 || w > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			return
		}
		widths[widest]--
	}
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// describeArguments lists a schema's properties, in the schema's order;
// required ones are starred. Their types are in --json's inputSchema.
func describeArguments(schema json.RawMessage) string {
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Properties) == 0 {
		return "-"
	}
	var parts []string
	for _, name := range objectKeys(s.Properties) {
		p := name
		if slices.Contains(s.Required, name) {
			p += "*"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "-"
	}
	return clip(strings.Join(parts, " "), 32)
}

// clip shortens s to max runes, marking the cut with an ellipsis.
func clip(s string, max int) string {
	if r := []rune(s); len(r) > max && max > 0 {
		return string(r[:max-1]) + "…"
	}
	return s
}

// objectKeys returns the member names of a JSON object in their order.
func objectKeys(raw json.RawMessage) []string {
	d := json.NewDecoder(bytes.NewReader(raw))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return keys
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if d.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return clip(s, 72)
}

func (a *app) printPrompts(prompts []mcp.Prompt) error {
	return printList(a, "prompts", "prompts", "NAME\tARGUMENTS\tDESCRIPTION", prompts, "(* required)",
		func(p mcp.Prompt) []string {
			var args []string
			for _, arg := range p.Arguments {
				s := arg.Name
				if arg.Required {
					s += "*"
				}
				args = append(args, s)
			}
			return []string{p.Name, dash(strings.Join(args, " ")), firstLine(p.Description)}
		})
}

func (a *app) printResources(rs []mcp.Resource) error {
	return printList(a, "resources", "resources", "URI\tNAME\tTYPE\tDESCRIPTION", rs, "",
		func(r mcp.Resource) []string {
			return []string{r.URI, r.Name, dash(r.MIMEType), firstLine(r.Description)}
		})
}

func (a *app) printTemplates(ts []mcp.ResourceTemplate) error {
	return printList(a, "resourceTemplates", "resource templates", "URI TEMPLATE\tNAME\tTYPE\tDESCRIPTION", ts, "",
		func(t mcp.ResourceTemplate) []string {
			return []string{t.URITemplate, t.Name, dash(t.MIMEType), firstLine(t.Description)}
		})
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (a *app) printCompletion(res *mcp.CompleteResult) error {
	if a.opts.jsonOut {
		return a.writeJSON(res)
	}
	c := res.Completion
	if len(c.Values) == 0 {
		fmt.Fprintln(a.stdout, "(no completions)")
	}
	for _, v := range c.Values {
		fmt.Fprintln(a.stdout, peerLine(v))
	}
	switch {
	case c.Total > len(c.Values):
		fmt.Fprintf(a.stdout, "(%d of %d)\n", len(c.Values), c.Total)
	case c.HasMore:
		fmt.Fprintln(a.stdout, "(more to come)")
	}
	return nil
}

func (a *app) printToolResult(name string, res *mcp.CallToolResult) error {
	if a.opts.jsonOut {
		return a.writeJSON(res)
	}
	if res.IsError {
		fmt.Fprintln(a.stdout, "Error:")
	}
	for i, b := range res.Content {
		if err := a.printBlock(name, i+1, b); err != nil {
			return err
		}
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		raw, err := json.MarshalIndent(res.StructuredContent, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "%s\n", peerText(string(raw)))
	}
	return nil
}

func (a *app) printPrompt(name string, res *mcp.GetPromptResult) error {
	if a.opts.jsonOut {
		return a.writeJSON(res)
	}
	if res.Description != "" {
		fmt.Fprintln(a.stdout, a.wrap(peerText(res.Description), 0))
	}
	for i, m := range res.Messages {
		fmt.Fprintf(a.stdout, "[%s]\n", peerLine(string(m.Role)))
		if err := a.printBlock(name, i+1, m.Content); err != nil {
			return err
		}
	}
	return nil
}

func (a *app) printResourceContents(res *mcp.ReadResourceResult) error {
	if a.opts.jsonOut {
		return a.writeJSON(res)
	}
	for i, c := range res.Contents {
		if err := a.printContents(c, i+1, len(res.Contents) > 1); err != nil {
			return err
		}
	}
	return nil
}

func (a *app) printContents(c mcp.ResourceContents, n int, header bool) error {
	switch c := c.(type) {
	case *mcp.TextResourceContents:
		if header {
			fmt.Fprintf(a.stdout, "[%s]\n", peerLine(c.URI))
		}
		fmt.Fprintln(a.stdout, a.wrap(peerText(strings.TrimRight(c.Text, "\n")), 0))
	case *mcp.BlobResourceContents:
		file, err := a.save(baseName(c.URI, n), c.MIMEType, c.Blob)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "[%s: %s, %d bytes, saved to %s]\n", peerLine(c.URI), peerLine(dash(c.MIMEType)), len(c.Blob), peerLine(file))
	}
	return nil
}

// printBlock prints one content block: text as text, images and audio
// saved to files, links and embedded resources by their URI.
func (a *app) printBlock(name string, n int, b mcp.ContentBlock) error {
	switch b := b.(type) {
	case *mcp.TextContent:
		fmt.Fprintln(a.stdout, a.wrap(peerText(b.Text), 0))
	case *mcp.ImageContent:
		file, err := a.save(fmt.Sprintf("%s-%d", safeName(name), n), b.MIMEType, b.Data)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "[image %s, %d bytes, saved to %s]\n", peerLine(b.MIMEType), len(b.Data), peerLine(file))
	case *mcp.AudioContent:
		file, err := a.save(fmt.Sprintf("%s-%d", safeName(name), n), b.MIMEType, b.Data)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "[audio %s, %d bytes, saved to %s]\n", peerLine(b.MIMEType), len(b.Data), peerLine(file))
	case *mcp.ResourceLink:
		fmt.Fprintf(a.stdout, "[link %s %q", peerLine(b.URI), b.Name)
		if b.MIMEType != "" {
			fmt.Fprintf(a.stdout, " %s", peerLine(b.MIMEType))
		}
		fmt.Fprintln(a.stdout, "]")
	case *mcp.EmbeddedResource:
		return a.printContents(b.Resource, n, true)
	default:
		raw, err := mcp.Marshal(b)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "%s\n", peerText(string(raw)))
	}
	return nil
}

// save writes data to a new file in the --out directory, named base with
// the extension of mimeType, and returns its path. An existing file is
// never overwritten: a number is added instead.
func (a *app) save(base, mimeType string, data []byte) (string, error) {
	ext := ".bin"
	if exts, _ := mime.ExtensionsByType(mimeType); len(exts) > 0 {
		ext = preferredExt(mimeType, exts)
	}
	if err := os.MkdirAll(a.opts.outDir, 0o755); err != nil {
		return "", &usageError{fmt.Errorf("--out: %w", err)}
	}
	for i := 0; ; i++ {
		name := base + ext
		if i > 0 {
			name = fmt.Sprintf("%s (%d)%s", base, i, ext)
		}
		p := filepath.Join(a.opts.outDir, name)
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if os.IsExist(err) {
			continue
		}
		if err != nil {
			return "", &usageError{fmt.Errorf("saving %s: %w", p, err)}
		}
		_, werr := f.Write(data)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return "", &usageError{fmt.Errorf("saving %s: %w", p, werr)}
		}
		return p, nil
	}
}

// preferredExt picks the usual extension where the system lists several.
func preferredExt(mimeType string, exts []string) string {
	common := map[string]string{"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "audio/wav": ".wav", "audio/x-wav": ".wav", "audio/mpeg": ".mp3", "text/plain": ".txt", "text/html": ".html"}
	if e, ok := common[mimeType]; ok {
		return e
	}
	slices.Sort(exts)
	return exts[0]
}

// safeName keeps a tool name usable as a file name.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r < ' ' {
			return '_'
		}
		return r
	}, s)
}

// baseName is the last path element of a URI, without its extension.
func baseName(uri string, n int) string {
	if u, err := url.Parse(uri); err == nil {
		b := path.Base(u.Path)
		if b != "/" && b != "." && b != "" {
			return safeName(strings.TrimSuffix(b, path.Ext(b)))
		}
		if u.Host != "" {
			return safeName(strings.TrimSuffix(u.Host, path.Ext(u.Host)))
		}
	}
	return fmt.Sprintf("resource-%d", n)
}

// eventDoc is the JSON form of one listen event.
type eventDoc struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

func (a *app) printEvent(ev client.ListenEvent) error {
	if a.opts.jsonOut {
		raw, err := json.Marshal(eventDoc{Method: ev.Method, Params: ev.Params})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(a.stdout, "%s\n", raw)
		return err
	}
	if ev.URI != "" {
		_, err := fmt.Fprintf(a.stdout, "%s %s\n", peerLine(ev.Method), peerLine(ev.URI))
		return err
	}
	_, err := fmt.Fprintln(a.stdout, peerLine(ev.Method))
	return err
}

// maxWrap is the widest text is wrapped to, however wide the terminal:
// longer lines are hard to read.
const maxWrap = 100

// wrap breaks text into lines of at most a.width (and maxWrap) columns,
// less indent (no wrapping when a.width is 0), at spaces; longer words
// stay whole.
func (a *app) wrap(text string, indent int) string {
	width := min(a.width, maxWrap) - indent
	if a.width == 0 || width < 20 {
		return text
	}
	var out strings.Builder
	for i, line := range strings.Split(text, "\n") {
		if i > 0 {
			out.WriteByte('\n')
		}
		col := 0
		for j, word := range strings.Fields(line) {
			w := len([]rune(word))
			if j > 0 && col+1+w > width {
				out.WriteByte('\n')
				col = 0
			} else if j > 0 {
				out.WriteByte(' ')
				col++
			}
			out.WriteString(word)
			col += w
		}
	}
	return out.String()
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
