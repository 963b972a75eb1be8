// The tools every TypeScript server here serves: "ask" elicits a name with
// a form (elicitation/create, the 2025 way) and answers with what the
// client said, as "<action>:<name>", so that a test sees the answer reach
// the result; "greet" answers "hello" without asking, for the stateless
// server, which cannot ask (see server-http.mjs).
import { McpServer } from '@modelcontextprotocol/server';

export function newServer(name) {
    const server = new McpServer({ name, version: '1.0.0' });
    server.registerTool('ask', { description: 'Asks the person at the host for a name.' }, async ctx => {
        const answer = await ctx.mcpReq.elicitInput({
            mode: 'form',
            message: 'What is your name?',
            requestedSchema: {
                type: 'object',
                properties: { name: { type: 'string', description: 'your name' } },
                required: ['name']
            }
        });
        return { content: [{ type: 'text', text: `${answer.action}:${answer.content?.name ?? ''}` }] };
    });
    server.registerTool('greet', { description: 'Says hello.' }, async () => ({ content: [{ type: 'text', text: 'hello' }] }));
    return server;
}
