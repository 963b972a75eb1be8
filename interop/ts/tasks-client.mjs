// The tasks extension's own client (@modelcontextprotocol/ext-tasks) on the
// TypeScript SDK v2 client, against a Parley server with task tools. It
// runs every flow and prints one JSON object on stdout, a report per flow.
//
//   node tasks-client.mjs http <url> <token> <other-token>
//   node tasks-client.mjs stdio <command> [args...]
//
// The SDK client negotiates 2026-07-28 (versionNegotiation auto) and serves
// the base protocol; ext-tasks needs the tasks methods and the task-capable
// tools/call sent as it frames them, which the SDK's typed request path
// would refuse, so it gets a raw dispatch of ours: the request goes out on
// the client's own transport under an id of its own, with the headers
// ext-tasks asks for (Mcp-Name), and its answer is taken off the transport
// before the SDK sees it.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { JsonRpcResponseError, createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';

const [kind, ...rest] = process.argv.slice(2);
if ((kind !== 'http' || rest.length !== 3) && (kind !== 'stdio' || rest.length === 0)) {
    console.error('usage: tasks-client.mjs http <url> <token> <other-token> | stdio <command> [args...]');
    process.exit(2);
}

const clientInfo = { name: 'ts-tasks-client', version: '1.0.0' };
const clientCapabilities = { elicitation: { form: {} } };

// rawDispatch sends ext-tasks' requests on transport and resolves with
// their answers, which it takes off the transport first.
function rawDispatch(transport) {
    const pending = new Map();
    let seq = 0;
    const sdkOnMessage = transport.onmessage;
    transport.onmessage = (message, extra) => {
        const waiter = typeof message?.id === 'string' ? pending.get(message.id) : undefined;
        if (waiter !== undefined && ('result' in message || 'error' in message)) {
            pending.delete(message.id);
            waiter('error' in message ? { kind: 'error', error: message.error } : { kind: 'result', result: message.result });
            return;
        }
        sdkOnMessage?.(message, extra);
    };
    return (request, options = {}) =>
        new Promise((resolve, reject) => {
            const id = `ext-tasks-${++seq}`;
            pending.set(id, resolve);
            options.signal?.addEventListener(
                'abort',
                () => {
                    if (pending.delete(id)) reject(options.signal.reason);
                },
                { once: true }
            );
            const headers = options.context?.headers;
            transport.send({ ...request, jsonrpc: '2.0', id }, headers ? { headers } : undefined).catch(error => {
                if (pending.delete(id)) reject(error);
            });
        });
}

// connect returns a task session on a fresh SDK client, and the input
// requests its callback saw (their scope: "request" for a round before the
// task, "task" for a question of a running task).
async function connect(token) {
    const client = new Client(clientInfo, { capabilities: clientCapabilities, versionNegotiation: { mode: 'auto' } });
    const transport =
        kind === 'http'
            ? new StreamableHTTPClientTransport(new URL(rest[0]), { requestInit: { headers: { Authorization: `Bearer ${token}` } } })
            : new StdioClientTransport({ command: rest[0], args: rest.slice(1), env: process.env, stderr: 'inherit' });
    await client.connect(transport);
    const asked = [];
    const session = createTaskSessionFromClient(client, {
        endpointId: `parley-${kind}-${token ?? 'stdio'}`,
        rawDispatch: rawDispatch(transport),
        v2RequestFraming: { protocolVersion: client.getNegotiatedProtocolVersion(), clientInfo, clientCapabilities },
        onInputRequest: async (request, context) => {
            asked.push(context.scope);
            if (request.kind !== 'elicitation') throw new Error(`unexpected input request ${request.kind}`);
            return { action: 'accept', content: { name: 'Ada' } };
        },
        onError: error => console.error('tasks-client: ext-tasks:', error)
    });
    return { client, session, asked, version: client.getNegotiatedProtocolVersion() };
}

function text(result) {
    return (result?.content ?? []).filter(b => b.type === 'text').map(b => b.text).join('');
}

// settled calls tool and reports how its execution ended.
async function settled(session, tool) {
    const execution = await session.callTool(tool, {});
    const { outcome } = await execution.settle();
    const report = { kind: execution.kind, taskId: execution.handle?.taskId, status: outcome.status };
    if (outcome.status === 'completed') {
        report.resultType = outcome.result.resultType;
        report.text = text(outcome.result);
        report.isError = outcome.result.isError ?? false;
    }
    if (outcome.status === 'failed') {
        report.code = outcome.error.code;
        report.message = outcome.error.message;
    }
    return report;
}

// errorOf reports what op threw: a JSON-RPC error's code and message.
async function errorOf(op) {
    try {
        await op();
        return { code: 0, message: 'no error' };
    } catch (error) {
        return error instanceof JsonRpcResponseError ? { code: error.code, message: error.message } : { code: -1, message: String(error) };
    }
}

// flow runs one flow; a flow that throws reports the error, and the
// others run on.
async function flow(name, report, run) {
    try {
        report[name] = await run();
    } catch (error) {
        report[name] = { thrown: String(error?.stack ?? error) };
    }
}

const report = {};
const alice = await connect(rest[1]);
report.protocolVersion = alice.version;
await flow('complete', report, () => settled(alice.session, 'complete'));
await flow('toolError', report, () => settled(alice.session, 'tool_error'));
await flow('failure', report, () => settled(alice.session, 'fail'));
await flow('inputMidTask', report, async () => {
    alice.asked.length = 0;
    return { ...(await settled(alice.session, 'ask_mid')), asked: [...alice.asked] };
});
await flow('roundsBeforeTask', report, async () => {
    alice.asked.length = 0;
    return { ...(await settled(alice.session, 'ask_first')), asked: [...alice.asked] };
});
await flow('cancel', report, async () => {
    const execution = await alice.session.callTool('wait', {});
    await execution.cancel();
    const outcome = await execution.result();
    const after = await alice.session.task(execution.handle.taskId).snapshot();
    return { kind: execution.kind, taskId: execution.handle?.taskId, status: outcome.status, serverStatus: after.status };
});
await flow('unknownId', report, () => errorOf(() => alice.session.task('no-such-task').snapshot()));
if (kind === 'http') {
    await flow('anotherPrincipal', report, async () => {
        const execution = await alice.session.callTool('wait', {});
        const taskId = execution.handle.taskId;
        const bob = await connect(rest[2]);
        try {
            const get = await errorOf(() => bob.session.task(taskId).snapshot());
            const cancel = await errorOf(() => bob.session.task(taskId).cancel());
            const ownerStatus = (await alice.session.task(taskId).snapshot()).status;
            await execution.cancel();
            return { taskId, get, cancel, ownerStatus };
        } finally {
            await bob.session.close();
            await bob.client.close();
        }
    });
}
console.log(JSON.stringify(report));
await alice.session.close();
await alice.client.close();
