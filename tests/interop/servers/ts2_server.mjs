// Interop fixture: a small MCP server on the TypeScript SDK v2 (@modelcontextprotocol/server 2.x, zod 4).
// Serves 2026-07-28 (server/discover) and, by default, the handshake revisions statelessly.
//
//   node --preserve-symlinks-main $AGENTHEALTH_INTEROP_DIR/servers/ts2_server.mjs --transport stdio [--legacy reject]
//   node --preserve-symlinks-main $AGENTHEALTH_INTEROP_DIR/servers/ts2_server.mjs --transport http [--legacy reject] [--port N]
//
// (Why through the symlink: see ts1_server.mjs.)
//
// --legacy reject: 2026-07-28 only. `initialize` and every other request without the
// per-request envelope is answered with -32022 (HTTP 400) naming ["2026-07-28"].
// Default: the SDK's own defaults (HTTP: legacy 'stateless', responseMode 'auto';
// stdio: the opening request picks the era).
//
// HTTP binds 127.0.0.1 (ephemeral port unless --port), serves /mcp and prints
// `listening on http://127.0.0.1:PORT/mcp` on stdout once bound. With
// INTEROP_EXIT_ON_STDIN_EOF=1 (set by the Rust harness) it exits when stdin closes.
import http from 'node:http';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const { values: opts } = parseArgs({
  options: {
    transport: { type: 'string' },
    legacy: { type: 'string' },
    port: { type: 'string', default: '0' },
  },
});
if (!['http', 'stdio'].includes(opts.transport) || ![undefined, 'reject'].includes(opts.legacy)) {
  console.error('usage: ts2_server.mjs --transport http|stdio [--legacy reject] [--port N]');
  process.exit(2);
}
const reject = opts.legacy === 'reject';

// The SDK calls this once per HTTP request (or per stdio connection) for a fresh instance.
function buildServer() {
  const server = new McpServer({ name: 'agenthealth-interop-ts2', version: '1.0.0' });
  server.registerTool('echo', {
    title: 'Echo',
    description: 'Answer with the given text, unchanged.',
    inputSchema: z.object({ text: z.string() }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  server.registerResource('greeting', 'interop://greeting',
    { mimeType: 'text/plain', description: 'A fixed text resource.' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'hello from agenthealth-interop-ts2' }] }));
  server.registerPrompt('summarize', {
    title: 'Summarize',
    description: 'A one-message prompt asking for a summary of the text.',
    argsSchema: z.object({ text: z.string() }),
  }, ({ text }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Summarize in one sentence:\n${text}` } }] }));
  return server;
}

if (opts.transport === 'stdio') {
  serveStdio(buildServer, reject ? { legacy: 'reject' } : {});
} else {
  if (process.env.INTEROP_EXIT_ON_STDIN_EOF === '1') {
    process.stdin.on('end', () => process.exit(0)).on('error', () => process.exit(0)).resume();
  }
  const handler = createMcpHandler(buildServer, reject ? { legacy: 'reject' } : {});

  // createMcpHandler is fetch-shaped (Request -> Response); this is the small
  // node:http adapter around it, so no extra adapter package is needed.
  async function handle(req, res) {
    if (new URL(req.url, 'http://x').pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const response = await handler.fetch(new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers,
      body: hasBody ? Buffer.concat(chunks) : undefined,
      signal: abort.signal,
    }));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body && req.method !== 'HEAD') {
      Readable.fromWeb(response.body).on('error', () => res.end()).pipe(res);
    } else {
      res.end();
    }
  }

  const httpServer = http.createServer((req, res) => {
    handle(req, res).catch((err) => {
      console.error('ts2_server:', err);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  httpServer.listen(Number(opts.port), '127.0.0.1', () => {
    console.log(`listening on http://127.0.0.1:${httpServer.address().port}/mcp`);
  });
}
