// A stdio server of the 2025 generation only: an McpServer connected by
// hand to the TypeScript SDK v2's StdioServerTransport, as deployed stdio
// servers are. It answers server/discover with -32601.
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

import { newServer } from './tool.mjs';

await newServer('ts-stdio').connect(new StdioServerTransport());
