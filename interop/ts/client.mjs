// The TypeScript SDK v2 client against a Parley server: it connects,
// answers the server's elicitation with the name "Ada", calls the tool
// "ask" and prints {"protocolVersion": ..., "text": ...} on stdout.
//
//   node client.mjs legacy|auto http <url>
//   node client.mjs legacy|auto stdio <command> [args...]
//
// legacy is the client's default (initialize, no probe); auto probes
// server/discover first and speaks 2026-07-28 to a server that answers it.
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [mode, kind, ...target] = process.argv.slice(2);
if ((mode !== 'legacy' && mode !== 'auto') || (kind !== 'http' && kind !== 'stdio') || target.length === 0) {
    console.error('usage: client.mjs legacy|auto http <url> | stdio <command> [args...]');
    process.exit(2);
}

const client = new Client(
    { name: 'ts-client', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode } }
);
let asked = 0;
client.setRequestHandler('elicitation/create', async () => {
    asked++;
    return { action: 'accept', content: { name: 'Ada' } };
});

const transport =
    kind === 'http'
        ? new StreamableHTTPClientTransport(new URL(target[0]))
        : new StdioClientTransport({ command: target[0], args: target.slice(1), env: process.env, stderr: 'inherit' });
await client.connect(transport);
const result = await client.callTool({ name: 'ask', arguments: {} });
const text = (result.content ?? []).filter(b => b.type === 'text').map(b => b.text).join('');
console.log(JSON.stringify({ protocolVersion: client.getNegotiatedProtocolVersion(), text, asked, isError: result.isError ?? false }));
await client.close();
