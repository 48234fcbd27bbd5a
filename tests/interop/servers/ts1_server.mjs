// Interop fixture: a small MCP server on the TypeScript SDK v1 (@modelcontextprotocol/sdk 1.x).
// Handshake revisions only (2024-11-05 … 2025-11-25); no server/discover.
//
//   node --preserve-symlinks-main $AGENTHEALTH_INTEROP_DIR/servers/ts1_server.mjs --transport stdio
//   node --preserve-symlinks-main $AGENTHEALTH_INTEROP_DIR/servers/ts1_server.mjs --transport http [--mode json|sse|stateless] [--port N]
//
// Run it through the servers/ symlink that .ci/interop-setup makes inside the install
// dir: ESM resolves bare imports from the script's own folder, and
// --preserve-symlinks-main keeps that folder next to the installed node_modules.
//
// HTTP modes (Streamable HTTP on /mcp), default json:
//   json       stateful (Mcp-Session-Id), enableJsonResponse: POST answers application/json
//   sse        stateful, POST answers text/event-stream
//   stateless  no sessions, application/json
// HTTP binds 127.0.0.1 (ephemeral port unless --port) and prints
// `listening on http://127.0.0.1:PORT/mcp` on stdout once bound. With
// INTEROP_EXIT_ON_STDIN_EOF=1 (set by the Rust harness) it exits when stdin closes.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const { values: opts } = parseArgs({
  options: {
    transport: { type: 'string' },
    mode: { type: 'string', default: 'json' },
    port: { type: 'string', default: '0' },
  },
});
if (!['http', 'stdio'].includes(opts.transport) || !['json', 'sse', 'stateless'].includes(opts.mode)) {
  console.error('usage: ts1_server.mjs --transport http|stdio [--mode json|sse|stateless] [--port N]');
  process.exit(2);
}

// One McpServer per connection (stdio) or per session / stateless request (HTTP).
function buildServer() {
  const server = new McpServer({ name: 'agenthealth-interop-ts1', version: '1.0.0' });
  server.registerTool('echo', {
    title: 'Echo',
    description: 'Answer with the given text, unchanged.',
    inputSchema: { text: z.string() },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  server.registerResource('greeting', 'interop://greeting',
    { mimeType: 'text/plain', description: 'A fixed text resource.' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'hello from agenthealth-interop-ts1' }] }));
  server.registerPrompt('summarize', {
    title: 'Summarize',
    description: 'A one-message prompt asking for a summary of the text.',
    argsSchema: { text: z.string() },
  }, ({ text }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Summarize in one sentence:\n${text}` } }] }));
  return server;
}

if (opts.transport === 'stdio') {
  await buildServer().connect(new StdioServerTransport());
} else {
  if (process.env.INTEROP_EXIT_ON_STDIN_EOF === '1') {
    process.stdin.on('end', () => process.exit(0)).on('error', () => process.exit(0)).resume();
  }
  const json = opts.mode !== 'sse';
  const sessions = new Map(); // Mcp-Session-Id -> transport; the SDK leaves routing to the app

  async function handle(req, res) {
    if (new URL(req.url, 'http://x').pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    if (opts.mode === 'stateless') {
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => transport.close());
      await buildServer().connect(transport);
      await transport.handleRequest(req, res);
      return;
    }
    const sid = req.headers['mcp-session-id'];
    let transport = sid ? sessions.get(sid) : undefined;
    if (sid && !transport) {
      // Unknown or deleted session: 404 as the spec asks, so clients re-initialize.
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify(
        { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
      return;
    }
    if (!transport) {
      // No session yet: the transport itself refuses anything but initialize.
      const fresh = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: json,
        onsessioninitialized: (id) => sessions.set(id, fresh),
      });
      fresh.onclose = () => { if (fresh.sessionId) sessions.delete(fresh.sessionId); };
      await buildServer().connect(fresh);
      transport = fresh;
    }
    await transport.handleRequest(req, res);
  }

  const httpServer = http.createServer((req, res) => {
    handle(req, res).catch((err) => {
      console.error('ts1_server:', err);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  httpServer.listen(Number(opts.port), '127.0.0.1', () => {
    console.log(`listening on http://127.0.0.1:${httpServer.address().port}/mcp`);
  });
}
