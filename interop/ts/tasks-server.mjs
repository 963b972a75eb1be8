// A 2026-07-28 server on the TypeScript SDK v2 that speaks the tasks
// extension (io.modelcontextprotocol/tasks) by hand, checking every tasks
// message it receives and sends against the schemas of the extension's own
// package (@modelcontextprotocol/ext-tasks, core/v2): what Parley's client
// sends is what that package accepts, and what it reads is what that
// package produces.
//
//   node tasks-server.mjs http  <poll-log>   prints "listening <url>"; exits when stdin closes
//   node tasks-server.mjs stdio <poll-log>   serves stdin/stdout (serveStdio)
//
// Its tools answer every client that declared the extension with a task
// (-32021 otherwise). A task's work is done on its third tasks/get, counted
// rather than timed, so that a client that polls too fast gains nothing:
//
//   complete    completes with "done"
//   tool_error  completes with an isError result
//   fail        fails with -32602 "Invalid params: bad input"
//   wait        stays working until tasks/cancel
//   ask_mid     asks a form for a name while it runs (input_required on its
//               first tasks/get), then completes with "hello <name>"; the
//               tasks/get right after the answer still shows the question,
//               as a server that acknowledges first may
//   ask_first   asks the name in a multi-round-trip round before it creates
//               the task, then completes with "hello <name>"
//
// Every task belongs to the bearer token it was created with (over HTTP;
// one principal on stdio): another's tasks/* is answered as an unknown id,
// -32602. Each task's creation and every tasks/get of it is appended to
// <poll-log> as "<taskId> created|get <unix ms>", for the test to check
// the client's pacing. The suggested interval is POLL_MS.
import { appendFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

import { CLIENT_CAPABILITIES_META_KEY, ProtocolError, Server, createMcpHandler } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import {
    CallToolResultV2Schema,
    CancelTaskRequestV2Schema,
    CancelTaskResultV2Schema,
    CreateTaskResultV2Schema,
    GetTaskRequestV2Schema,
    GetTaskResultV2Schema,
    TASKS_EXTENSION_ID_V2,
    UpdateTaskRequestV2Schema,
    UpdateTaskResultV2Schema
} from '@modelcontextprotocol/ext-tasks/core/v2';

const POLL_MS = 200;
const DONE_AT_GET = 3;

const [kind, pollLog] = process.argv.slice(2);
if ((kind !== 'http' && kind !== 'stdio') || !pollLog) {
    console.error('usage: tasks-server.mjs http|stdio <poll-log>');
    process.exit(2);
}

function log(taskId, what) {
    appendFileSync(pollLog, `${taskId} ${what} ${Date.now()}\n`);
}

// check parses value with an ext-tasks schema; what does not parse is
// answered with -32602 (a message the client sent) or -32603 (one this
// server was about to send), naming the schema's complaint.
function check(schema, value, code, what) {
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
        console.error(`tasks-server: ${what} does not parse:`, JSON.stringify(value), parsed.error.message);
        throw new ProtocolError(code, `${what} does not match the ext-tasks schema: ${parsed.error.message}`);
    }
    return value;
}

// Any params: the tasks methods' params are checked against the
// extension's request schemas in the handlers, whole.
const anyParams = {
    '~standard': {
        version: 1,
        vendor: 'parley-interop',
        validate: value => (value !== null && typeof value === 'object' ? { value } : { issues: [{ message: 'params must be an object' }] })
    }
};

const nameForm = {
    method: 'elicitation/create',
    params: {
        mode: 'form',
        message: 'What is your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }
    }
};

const tasks = new Map(); // taskId -> { principal, tool, status, gets, name, answeredAt, ... }

function principalOf(ctx) {
    const header = ctx.http?.req?.headers.get('authorization') ?? '';
    return header.startsWith('Bearer ') ? header.slice('Bearer '.length) : kind === 'stdio' ? 'stdio' : 'anonymous';
}

// taskOf returns the caller's task named by params, after checking the
// Mcp-Name header over HTTP (the extension requires it on tasks/*).
function taskOf(ctx, params) {
    const header = ctx.http?.req?.headers.get('mcp-name');
    if (kind === 'http' && header !== params.taskId) {
        throw new ProtocolError(-32020, `Header mismatch: Mcp-Name header value '${header}' does not match body value '${params.taskId}'`);
    }
    const t = tasks.get(params.taskId);
    if (t === undefined || t.principal !== principalOf(ctx)) {
        throw new ProtocolError(-32602, 'Failed to retrieve task: Task not found');
    }
    return t;
}

function now() {
    return new Date().toISOString();
}

function wireTask(t) {
    return {
        taskId: t.id,
        status: t.status,
        createdAt: t.createdAt,
        lastUpdatedAt: t.updatedAt,
        ttlMs: 600000,
        pollIntervalMs: POLL_MS
    };
}

function textResult(text, isError) {
    return { resultType: 'complete', content: [{ type: 'text', text }], ...(isError ? { isError: true } : {}) };
}

// advance moves t on by one tasks/get, the unit of work here.
function advance(t) {
    t.gets++;
    if (t.status !== 'working' && t.status !== 'input_required') {
        return;
    }
    if (t.tool === 'ask_mid' && t.name === undefined) {
        t.status = 'input_required';
        return;
    }
    if (t.tool === 'ask_mid' && t.echoQuestion) {
        t.echoQuestion = false; // the answer is in, the status shows it next time
        return;
    }
    t.status = 'working';
    if (t.tool === 'wait' || t.gets < DONE_AT_GET) {
        return;
    }
    switch (t.tool) {
        case 'complete':
            t.status = 'completed';
            t.result = textResult('done');
            break;
        case 'tool_error':
            t.status = 'completed';
            t.result = textResult('the tool failed', true);
            break;
        case 'fail':
            t.status = 'failed';
            t.error = { code: -32602, message: 'Invalid params: bad input' };
            break;
        default:
            t.status = 'completed';
            t.result = textResult(`hello ${t.name}`);
    }
    t.updatedAt = now();
}

function newServer() {
    const server = new Server(
        { name: 'ts-tasks', version: '1.0.0' },
        { capabilities: { tools: {}, extensions: { [TASKS_EXTENSION_ID_V2]: {} } } }
    );
    const tools = ['complete', 'tool_error', 'fail', 'wait', 'ask_mid', 'ask_first'];
    server.setRequestHandler('tools/list', async () => ({
        tools: tools.map(name => ({ name, inputSchema: { type: 'object' } }))
    }));
    server.setRequestHandler('tools/call', async (request, ctx) => {
        const p = request.params;
        if (!tools.includes(p.name)) {
            throw new ProtocolError(-32602, `Unknown tool: ${p.name}`);
        }
        if (ctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY]?.extensions?.[TASKS_EXTENSION_ID_V2] === undefined) {
            throw new ProtocolError(-32021, 'Missing required client capability', {
                requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID_V2]: {} } }
            });
        }
        let name;
        if (p.name === 'ask_first') {
            const answer = (ctx.mcpReq.inputResponses ?? p.inputResponses)?.name; // the SDK lifts them out of params
            if (answer?.action !== 'accept' || typeof answer.content?.name !== 'string') {
                return { resultType: 'input_required', inputRequests: { name: nameForm } };
            }
            name = answer.content.name;
        }
        const created = now();
        const t = { id: randomUUID(), principal: principalOf(ctx), tool: p.name, status: 'working', gets: 0, name, createdAt: created, updatedAt: created };
        tasks.set(t.id, t);
        log(t.id, 'created');
        return check(CreateTaskResultV2Schema, { resultType: 'task', ...wireTask(t) }, -32603, 'CreateTaskResult');
    });
    server.setRequestHandler('tasks/get', { params: anyParams }, async (params, ctx) => {
        check(GetTaskRequestV2Schema, { jsonrpc: '2.0', id: 0, method: 'tasks/get', params }, -32602, 'tasks/get');
        const t = taskOf(ctx, params);
        log(t.id, 'get');
        advance(t);
        const out = { resultType: 'complete', ...wireTask(t) };
        if (t.status === 'input_required') out.inputRequests = { name: nameForm };
        if (t.status === 'completed') out.result = check(CallToolResultV2Schema, t.result, -32603, 'the stored result');
        if (t.status === 'failed') out.error = t.error;
        return check(GetTaskResultV2Schema, out, -32603, 'GetTaskResult');
    });
    server.setRequestHandler('tasks/update', { params: anyParams }, async (wireParams, ctx) => {
        // The SDK lifts inputResponses out of every request's params (for
        // multi-round-trip retries); tasks/update carries them as its own.
        const params = { ...wireParams, inputResponses: ctx.mcpReq.inputResponses ?? wireParams.inputResponses };
        if (ctx.mcpReq.droppedInputResponseKeys?.length) {
            throw new ProtocolError(-32602, `inputResponses not bare answers: ${ctx.mcpReq.droppedInputResponseKeys}`);
        }
        check(UpdateTaskRequestV2Schema, { jsonrpc: '2.0', id: 0, method: 'tasks/update', params }, -32602, 'tasks/update');
        const t = taskOf(ctx, params);
        const answer = params.inputResponses.name;
        if (t.status === 'input_required' && answer !== undefined) {
            t.name = answer.action === 'accept' ? String(answer.content?.name) : `(${answer.action})`;
            t.echoQuestion = true;
            t.updatedAt = now();
        }
        return check(UpdateTaskResultV2Schema, { resultType: 'complete' }, -32603, 'UpdateTaskResult');
    });
    server.setRequestHandler('tasks/cancel', { params: anyParams }, async (params, ctx) => {
        check(CancelTaskRequestV2Schema, { jsonrpc: '2.0', id: 0, method: 'tasks/cancel', params }, -32602, 'tasks/cancel');
        const t = taskOf(ctx, params);
        if (t.status === 'working' || t.status === 'input_required') {
            t.status = 'cancelled';
            t.updatedAt = now();
        }
        return check(CancelTaskResultV2Schema, { resultType: 'complete' }, -32603, 'CancelTaskResult');
    });
    return server;
}

if (kind === 'stdio') {
    serveStdio(() => newServer(), { legacy: 'reject' });
} else {
    const handler = createMcpHandler(() => newServer(), { legacy: 'reject' });
    const http = createServer(async (req, res) => {
        try {
            const chunks = [];
            for await (const c of req) chunks.push(c);
            const body = Buffer.concat(chunks);
            const headers = new Headers();
            for (const [k, v] of Object.entries(req.headers)) {
                if (typeof v === 'string') headers.set(k, v);
            }
            const request = new Request(`http://${req.headers.host}${req.url}`, {
                method: req.method,
                headers,
                body: req.method === 'POST' ? body : undefined
            });
            const response = await handler.fetch(request);
            res.writeHead(response.status, Object.fromEntries(response.headers));
            res.end(Buffer.from(await response.arrayBuffer()));
        } catch (error) {
            console.error('tasks-server:', error);
            if (!res.headersSent) res.writeHead(500).end();
        }
    });
    http.listen(0, '127.0.0.1', () => {
        console.log(`listening http://127.0.0.1:${http.address().port}/mcp`);
    });
    process.stdin.on('end', () => process.exit(0));
    process.stdin.resume();
}
