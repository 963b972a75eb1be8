// A Streamable HTTP server of the 2025 generation, built the way deployed
// servers are built with the TypeScript SDK v2's Node transport:
//
//   node server-http.mjs stateful [port]    one session per initialize (Mcp-Session-Id)
//   node server-http.mjs stateless [port]   no sessions (sessionIdGenerator undefined)
//
// It listens on a free loopback port (or on port, to stand in for a server
// restarted where it was) and prints "listening <url>" on stdout.
// It exits when its stdin closes, so that it never outlives its test.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';

import { newServer } from './tool.mjs';

const mode = process.argv[2];
if (mode !== 'stateful' && mode !== 'stateless') {
    console.error('usage: server-http.mjs stateful|stateless [port]');
    process.exit(2);
}

// stateless: a fresh transport and server for every request, as the SDK
// requires (a stateless transport refuses a second request). Such a server
// cannot ask the client anything: the client POSTs its answer to an
// elicitation as a request of its own, which reaches a fresh server, not
// the one waiting for it.
async function statelessTransport(res) {
    const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const server = newServer('ts-stateless');
    await server.connect(transport);
    res.on('close', () => {
        transport.close();
        server.close();
    });
    return transport;
}

const sessions = new Map(); // Mcp-Session-Id -> transport
async function sessionTransport(req) {
    const id = req.headers['mcp-session-id'];
    if (typeof id === 'string' && sessions.has(id)) {
        return sessions.get(id);
    }
    // Unknown or no session: a fresh transport, which accepts initialize
    // and answers anything else 400 "Server not initialized", an unknown
    // session id included (as after a restart: the transport answers 404
    // only to another id once it has one of its own).
    const transport = new NodeStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: sid => sessions.set(sid, transport),
        onsessionclosed: sid => sessions.delete(sid)
    });
    await newServer('ts-stateful').connect(transport);
    return transport;
}

const http = createServer(async (req, res) => {
    try {
        const transport = mode === 'stateless' ? await statelessTransport(res) : await sessionTransport(req);
        await transport.handleRequest(req, res);
    } catch (error) {
        console.error('server-http:', error);
        if (!res.headersSent) {
            res.writeHead(500).end();
        }
    }
});
http.listen(Number(process.argv[3] ?? 0), '127.0.0.1', () => {
    console.log(`listening http://127.0.0.1:${http.address().port}/mcp`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
