// The TypeScript SDK v1 client (@modelcontextprotocol/sdk 1.x, the client
// most desktop hosts embed) against Parley's interop fixture
// (fixture_test.go): it runs every flow a host uses on one connection and
// prints a report on stdout, one JSON object whose members are the flows.
// A flow that throws reports {"error": "..."}; the Go test judges the rest.
//
//   node client-v1.mjs http <url>
//   node client-v1.mjs stdio <command> [args...]
//
// Besides what the SDK hands the program, the report shows the wire: every
// message the transport passed up, stamped with the synchronous turn it
// arrived in. Messages of one turn came out of one read: the SDK dispatches
// a read's messages in a loop, without letting promise callbacks run
// between them. The v1 client runs its progress callbacks from such a
// promise callback but forgets the request's progress callback as soon as
// it sees the response, so progress that shares its response's read is
// dropped (see ../README.md). The test tolerates exactly that: a
// notification missing from what the SDK delivered whose turn is the
// turn of its response.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
    CreateMessageRequestSchema,
    ElicitRequestSchema,
    ListRootsRequestSchema,
    LoggingMessageNotificationSchema,
    ResourceUpdatedNotificationSchema,
    ToolListChangedNotificationSchema
} from '@modelcontextprotocol/sdk/types.js';

const [kind, ...target] = process.argv.slice(2);
if ((kind !== 'http' && kind !== 'stdio') || target.length === 0) {
    console.error('usage: client-v1.mjs http <url> | stdio <command> [args...]');
    process.exit(2);
}

// deadline bounds every wait of this program for something the server
// should send, so that a server that never sends it fails the flow, not
// the test's timeout; all of them together end by budgetEnd, so that the
// report is printed before the test gives up on the program (60 s).
const deadline = 10_000;
const budgetEnd = Date.now() + 35_000;

// ---- the wire ----

let turn = 0;
let turnOpen = false;
// stamp returns the current synchronous turn: messages stamped before any
// promise callback ran share it.
function stamp() {
    if (!turnOpen) {
        turnOpen = true;
        turn++;
        queueMicrotask(() => {
            turnOpen = false;
        });
    }
    return turn;
}
const sent = []; // {id, method, name}
const received = []; // {turn, message}
const httpRequests = []; // {method, lastEventId, status}

// ---- the client ----

const client = new Client(
    { name: 'ts-v1-client', version: '1.0.0' },
    {
        capabilities: {
            elicitation: { form: { applyDefaults: true } },
            sampling: {},
            roots: { listChanged: true }
        }
    }
);

let elicitAnswer = { action: 'accept', content: { name: 'Ada' } };
const elicitations = [];
client.setRequestHandler(ElicitRequestSchema, async req => {
    elicitations.push(req.params);
    return structuredClone(elicitAnswer);
});
const samplings = [];
client.setRequestHandler(CreateMessageRequestSchema, async req => {
    samplings.push(req.params);
    const text = req.params.messages.map(m => m.content?.text ?? '').join(' ');
    return { role: 'assistant', model: 'ts-v1-model', content: { type: 'text', text: `echo ${text}` }, stopReason: 'endTurn' };
});
client.setRequestHandler(ListRootsRequestSchema, async () => ({
    roots: [{ uri: 'file:///work/one', name: 'one' }, { uri: 'file:///work/two' }]
}));
const logs = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, n => {
    logs.push(n.params);
});
const updates = [];
client.setNotificationHandler(ResourceUpdatedNotificationSchema, n => {
    updates.push(n.params.uri);
});
let toolListChanges = 0;
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    toolListChanges++;
});

// recordingFetch is fetch, recording each HTTP request's method, its
// Last-Event-ID (a resumption) and the status of its answer.
async function recordingFetch(url, init) {
    const entry = { method: init?.method ?? 'GET', lastEventId: new Headers(init?.headers).get('last-event-id') };
    httpRequests.push(entry);
    const res = await fetch(url, init);
    entry.status = res.status;
    return res;
}

const transport =
    kind === 'http'
        ? new StreamableHTTPClientTransport(new URL(target[0]), { fetch: recordingFetch })
        : new StdioClientTransport({ command: target[0], args: target.slice(1), env: process.env, stderr: 'inherit' });
// Protocol.connect chains these: ours run first, for every message.
transport.onmessage = message => {
    received.push({ turn: stamp(), message });
};
const send = transport.send.bind(transport);
transport.send = (message, options) => {
    if (message.id !== undefined && message.method) {
        sent.push({ id: message.id, method: message.method, name: message.params?.name });
    }
    return send(message, options);
};

// ---- helpers ----

// until waits for cond to hold, polling, for at most deadline ms.
async function until(cond, what) {
    const end = Math.min(Date.now() + deadline, budgetEnd);
    while (!cond()) {
        if (Date.now() > end) {
            throw new Error(`timed out waiting for ${what}`);
        }
        await new Promise(r => setTimeout(r, 10));
    }
}

// settle lets the notifications already received reach their handlers.
const settle = () => new Promise(r => setImmediate(r));

const text = result => (result.content ?? []).filter(b => b.type === 'text').map(b => b.text).join('');

// call calls a tool and reports its text, isError, what the SDK delivered
// as progress and what the wire carried for the call.
async function call(name, args = {}, options = {}) {
    const delivered = [];
    const result = await client.callTool({ name, arguments: args }, undefined, {
        timeout: 15_000,
        ...options,
        onprogress: p => {
            delivered.push(p.progress);
            options.onprogress?.(p);
        }
    });
    await settle();
    return { text: text(result), isError: result.isError ?? false, structuredContent: result.structuredContent, progress: progressOf(name, delivered) };
}

// progressOf reports the progress of the last call of tool name: what the
// SDK delivered, and what arrived on the wire with the turn it arrived in
// and the turn of the call's response.
function progressOf(name, delivered) {
    const req = sent.findLast(s => s.method === 'tools/call' && s.name === name);
    const wire = [];
    let resultTurn;
    for (const { turn, message } of received) {
        if (message.method === 'notifications/progress' && message.params?.progressToken === req?.id) {
            wire.push({ progress: message.params.progress, turn });
        } else if (message.method === undefined && message.id === req?.id) {
            resultTurn = turn;
        }
    }
    return { delivered, wire, resultTurn };
}

async function listAll(method, key) {
    const items = [];
    let cursor;
    let pages = 0;
    do {
        const page = await client[method](cursor ? { cursor } : undefined);
        items.push(...page[key]);
        cursor = page.nextCursor;
        pages++;
    } while (cursor && pages < 50);
    return { names: items.map(i => i.name ?? i.uri ?? i.uriTemplate), pages, items };
}

// ---- the flows ----

const report = {};
async function flow(name, f) {
    try {
        report[name] = await f();
    } catch (error) {
        report[name] = { error: String(error?.stack ?? error) };
    }
}

await client.connect(transport);
report.initialize = {
    protocolVersion: received.find(r => r.message.id === sent.find(s => s.method === 'initialize')?.id)?.message.result?.protocolVersion,
    serverInfo: client.getServerVersion(),
    capabilities: client.getServerCapabilities(),
    instructions: client.getInstructions()
};

await flow('ping', async () => ({ ok: Object.keys(await client.ping()).length >= 0 }));
await flow('tools', async () => {
    const { names, pages, items } = await listAll('listTools', 'tools');
    return { names, pages, weatherOutputSchema: items.find(t => t.name === 'weather')?.outputSchema };
});
await flow('prompts', async () => listAll('listPrompts', 'prompts'));
await flow('resources', async () => listAll('listResources', 'resources'));
await flow('templates', async () => listAll('listResourceTemplates', 'resourceTemplates'));
await flow('greet', () => call('greet', { name: 'Ada' }));
await flow('weather', () => call('weather', { city: 'Paris' }));
await flow('fail', () => call('fail'));
await flow('elicitAccept', async () => {
    elicitAnswer = { action: 'accept', content: { name: 'Ada' } };
    elicitations.length = 0;
    return { ...(await call('ask')), asked: elicitations.map(e => e.message) };
});
await flow('elicitDecline', async () => {
    elicitAnswer = { action: 'decline' };
    elicitations.length = 0;
    return { ...(await call('ask')), asked: elicitations.map(e => e.message) };
});
await flow('elicitDefaults', async () => {
    // Accepted with nothing filled in: the SDK fills in the schema's
    // defaults (applyDefaults) before the answer goes back.
    elicitAnswer = { action: 'accept', content: {} };
    elicitations.length = 0;
    const r = await call('preferences');
    return { ...r, requestedSchema: elicitations[0]?.requestedSchema };
});
await flow('sample', async () => {
    samplings.length = 0;
    const r = await call('sample', { prompt: 'Say hi' });
    return { ...r, requests: samplings.map(s => ({ maxTokens: s.maxTokens, text: s.messages.map(m => m.content?.text).join(' ') })) };
});
await flow('roots', () => call('roots'));
await flow('progress', () => call('progress'));
await flow('logging', async () => {
    await client.setLoggingLevel('warning');
    logs.length = 0;
    const warning = await call('log');
    const atWarning = logs.map(l => ({ level: l.level, logger: l.logger, data: l.data }));
    await client.setLoggingLevel('debug');
    logs.length = 0;
    await call('log');
    const atDebug = logs.map(l => l.level);
    return { text: warning.text, atWarning, atDebug };
});
await flow('cancel', async () => {
    const id = `wait-${process.pid}-${Date.now()}`;
    const controller = new AbortController();
    let abortError;
    try {
        await call('wait', { id }, { signal: controller.signal, onprogress: () => controller.abort('the host cancelled') });
    } catch (error) {
        abortError = String(error);
    }
    const cancelled = await call('cancelled', { id });
    return { abortError, text: cancelled.text };
});
await flow('complete', async () => {
    const prompt = await client.complete({ ref: { type: 'ref/prompt', name: 'greeting' }, argument: { name: 'language', value: 'fr' } });
    const template = await client.complete({
        ref: { type: 'ref/resource', uri: 'fixture://items/{id}' },
        argument: { name: 'id', value: 'ap' }
    });
    return { prompt: prompt.completion.values, template: template.completion.values };
});
await flow('prompt', async () => {
    const r = await client.getPrompt({ name: 'greeting', arguments: { name: 'Ada', language: 'french' } });
    const d = await client.getPrompt({ name: 'greeting', arguments: { name: 'Ada' } });
    return { text: r.messages.map(m => m.content.text).join(''), defaulted: d.messages.map(m => m.content.text).join('') };
});
await flow('read', async () => {
    const readme = await client.readResource({ uri: 'fixture://readme' });
    const item = await client.readResource({ uri: 'fixture://items/42' });
    return { readme: readme.contents.map(c => c.text).join(''), item: item.contents.map(c => c.text).join('') };
});
await flow('subscribe', async () => {
    if (kind === 'http') {
        // A session's changes go to its GET stream; the SDK opens it after
        // initialize, without waiting. Changes sent before it is open are
        // not kept, so wait for the server to have answered it.
        await until(() => httpRequests.some(r => r.method === 'GET' && r.status === 200), 'the GET stream');
    }
    updates.length = 0;
    await client.subscribeResource({ uri: 'fixture://counter' });
    await call('touch', { uri: 'fixture://counter' });
    await until(() => updates.length > 0, 'notifications/resources/updated');
    await client.unsubscribeResource({ uri: 'fixture://counter' });
    return { updates: [...updates] };
});
await flow('listChanged', async () => {
    toolListChanges = 0;
    await call('toggle');
    await until(() => toolListChanges >= 1, 'notifications/tools/list_changed');
    const added = (await listAll('listTools', 'tools')).names;
    await call('toggle');
    await until(() => toolListChanges >= 2, 'the second notifications/tools/list_changed');
    const removed = (await listAll('listTools', 'tools')).names;
    return { changes: toolListChanges, added, removed };
});
await flow('reconnect', async () => {
    const before = httpRequests.length;
    const r = await call('reconnect');
    return { ...r, resumptions: httpRequests.slice(before).filter(h => h.method === 'GET' && h.lastEventId).length };
});

console.log(JSON.stringify(report));
await client.close();
