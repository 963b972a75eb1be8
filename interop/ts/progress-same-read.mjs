// One call of the fixture's tool "progress" over stdio, by the TypeScript
// SDK v1 client or the v2 client in its legacy or automatic mode, reporting on stdout what the SDK delivered to the
// call's onprogress and the synchronous turn each message arrived in (see
// client-v1.mjs): {"text", "delivered": [...], "wire": [{"progress",
// "turn"}], "resultTurn"}.
//
//   node progress-same-read.mjs v1|v2-legacy|v2-auto <command> [args...]
//
// Served by the fixture with PARLEY_INTEROP_SERVE=fixture-same-read, which
// writes each progress notification together with the next message, so
// that one read carries the notifications and the response.
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';

const [sdk, command, ...args] = process.argv.slice(2);
if (!['v1', 'v2-legacy', 'v2-auto'].includes(sdk) || !command) {
    console.error('usage: progress-same-read.mjs v1|v2-legacy|v2-auto <command> [args...]');
    process.exit(2);
}

let turn = 0;
let turnOpen = false;
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

const [Client, Stdio] = sdk === 'v1' ? [ClientV1, StdioV1] : [ClientV2, StdioV2];
const options = sdk === 'v1' ? {} : { versionNegotiation: { mode: sdk.slice(3) } };
const client = new Client({ name: `ts-${sdk}-client`, version: '1.0.0' }, { capabilities: {}, ...options });
const transport = new Stdio({ command, args, env: process.env, stderr: 'inherit' });
const received = [];
transport.onmessage = message => {
    received.push({ turn: stamp(), message });
};
await client.connect(transport);

const delivered = [];
const onprogress = p => delivered.push(p.progress);
const result =
    sdk === 'v1'
        ? await client.callTool({ name: 'progress', arguments: {} }, undefined, { onprogress })
        : await client.callTool({ name: 'progress', arguments: {} }, { onprogress });
await new Promise(r => setImmediate(r));

const wire = [];
let resultTurn;
for (const { turn, message } of received) {
    if (message.method === 'notifications/progress') {
        wire.push({ progress: message.params.progress, turn });
    } else if (message.method === undefined && message.result?.content) {
        resultTurn = turn;
    }
}
const text = result.content.map(b => b.text).join('');
console.log(JSON.stringify({ text, delivered, wire, resultTurn }));
await client.close();
