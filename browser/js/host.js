// The test host: a web page that renders an MCP App as hosts do, built on
// the extension's own host library (AppBridge of
// @modelcontextprotocol/ext-apps) and the TypeScript SDK's client. It
// connects to the MCP server at /mcp (the test server proxies it), finds
// the tool with a view, reads the view, renders it in a sandboxed iframe
// behind a sandbox proxy of another origin, calls the tool and hands the
// view its input and result. Calls from the view go to the server through
// the bridge; the host refuses the view a tool it may not call. What
// happened is kept in window.hostState for the test to read.
//
// Query: ?mode=auto|legacy (the client's version negotiation: 2026-07-28,
// or 2025-11-25 with initialize) and sandbox=<URL of sandbox.html>.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
  isToolVisibilityAppOnly,
  isToolVisibilityModelOnly,
} from "@modelcontextprotocol/ext-apps/app-bridge";

const state = (window.hostState = { viewCalls: [], refused: [], errors: [], done: false });

function fail(err) {
  state.errors.push(String((err && err.stack) || err));
  document.getElementById("status").textContent = "host error: " + err;
}

async function main() {
  const params = new URLSearchParams(location.search);
  const mode = params.get("mode") || "auto";
  const info = { name: "parley-test-host", version: "1.0.0" };
  const client = new Client(info, {
    capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [RESOURCE_MIME_TYPE] } } },
    versionNegotiation: { mode },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", location.href)));
  state.protocolVersion = client.getNegotiatedProtocolVersion ? client.getNegotiatedProtocolVersion() : "";

  const { tools } = await client.listTools();
  state.allTools = tools.map((t) => t.name);
  // The agent is shown only the tools the model may see.
  state.agentTools = tools.filter((t) => !isToolVisibilityAppOnly(t)).map((t) => t.name);
  const tool = tools.find((t) => getToolUiResourceUri(t) && !isToolVisibilityAppOnly(t));
  if (!tool) throw new Error("no tool has a view");
  const uri = getToolUiResourceUri(tool);
  state.tool = tool.name;
  state.view = uri;
  const read = await client.readResource({ uri });
  const page = read.contents.find((c) => c.uri === uri);
  if (!page || page.mimeType !== RESOURCE_MIME_TYPE) throw new Error("the view is not " + RESOURCE_MIME_TYPE);
  const ui = (page._meta && page._meta.ui) || {};

  const frame = document.createElement("iframe");
  frame.title = "MCP App: " + uri;
  frame.setAttribute("sandbox", "allow-scripts allow-same-origin");
  document.getElementById("app").append(frame);
  if (ui.prefersBorder) frame.classList.add("bordered");

  const bridge = new AppBridge(client, info, { serverTools: {}, serverResources: {}, logging: {} }, {
    hostContext: { theme: "light", displayMode: "inline", platform: "web", containerDimensions: { maxHeight: 480 } },
  });
  bridge.addEventListener("sandboxready", () => {
    bridge.sendSandboxResourceReady({ html: page.text, sandbox: "allow-scripts", csp: ui.csp, permissions: ui.permissions });
  });
  bridge.addEventListener("sizechange", ({ height }) => {
    if (height) frame.style.height = height + "px";
  });
  bridge.addEventListener("initialized", () => {
    (async () => {
      const args = {};
      await bridge.sendToolInput({ arguments: args });
      const result = await client.callTool({ name: tool.name, arguments: args });
      state.toolResult = result;
      await bridge.sendToolResult(result);
      state.done = true;
    })().catch(fail);
  });
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));

  // The view's tools/call goes to the server (the bridge forwards it),
  // unless the tool is not the view's to call.
  const forward = bridge.oncalltool;
  bridge.oncalltool = async (p, extra) => {
    const t = tools.find((x) => x.name === p.name);
    if (!t || isToolVisibilityModelOnly(t)) {
      state.refused.push(p.name);
      throw new Error("the view may not call " + p.name);
    }
    state.viewCalls.push(p.name);
    return forward(p, extra);
  };
  frame.src = params.get("sandbox");
}

main().catch(fail);
