// OAuth lab: the fixture MCP server of ts2_server.mjs (TypeScript SDK v2,
// @modelcontextprotocol/server 2.x) protected by the SDK's own Express auth pieces
// (@modelcontextprotocol/express 2.x: requireBearerAuth + mcpAuthMetadataRouter).
//
//   node --preserve-symlinks-main $AGENTHEALTH_INTEROP_DIR/servers/ts2_oauth_server.mjs \
//        --issuer URL [--scopes read] [--scopes-supported read,write] [--port N]
//
// * requireBearerAuth({ requiredScopes, resourceMetadataUrl, expectedResource }) on every
//   method of /mcp (HEAD included): no or a bad token → 401 with
//   `WWW-Authenticate: Bearer error="invalid_token", …, scope="<required scopes>",
//   resource_metadata="…/.well-known/oauth-protected-resource/mcp"` — the challenge names
//   the scope, which the Python SDK's does not; a token missing a scope → 403.
// * mcpAuthMetadataRouter serves RFC 9728 metadata at the path-inserted location
//   (scopes_supported = --scopes-supported, which may say more than the challenge) and, as
//   the SDK does, a copy of the authorization server's metadata at this origin's
//   /.well-known/oauth-authorization-server: a client must still read the pinned issuer's.
// * The verifier checks the authorization server's RFC 9068 JWTs with jose against the JWKS
//   its metadata names: RS256, typ at+jwt, iss exactly, exp; `aud` becomes AuthInfo.resource,
//   which expectedResource compares with this server's URL.
//
// Stateless, both eras (the SDK's defaults). Binds 127.0.0.1, prints
// `listening on http://127.0.0.1:PORT/mcp`, exits when stdin closes with
// INTEROP_EXIT_ON_STDIN_EOF=1. The tool, resource and prompt are ts2_server.mjs's; they are
// repeated here because an imported sibling module would resolve its packages from the
// source tree, not from the installed node_modules (see ts1_server.mjs on symlinks).
import http from 'node:http';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import express from 'express';
import * as jose from 'jose';
import {
  McpServer,
  OAuthError,
  OAuthErrorCode,
  createMcpHandler,
  getOAuthProtectedResourceMetadataUrl,
} from '@modelcontextprotocol/server';
import { mcpAuthMetadataRouter, requireBearerAuth } from '@modelcontextprotocol/express';
import { z } from 'zod';

const { values: opts } = parseArgs({
  options: {
    issuer: { type: 'string' },
    scopes: { type: 'string', default: 'read' },
    'scopes-supported': { type: 'string' },
    port: { type: 'string', default: '0' },
  },
});
if (!opts.issuer) {
  console.error('usage: ts2_oauth_server.mjs --issuer URL [--scopes read] [--scopes-supported read,write] [--port N]');
  process.exit(2);
}
const list = (s) => s.split(',').filter(Boolean);
const requiredScopes = list(opts.scopes);
const scopesSupported = opts['scopes-supported'] === undefined ? requiredScopes : list(opts['scopes-supported']);

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

// oidc-provider serves its metadata under the issuer, with or without a path.
async function authorizationServerMetadata(issuer) {
  const response = await fetch(`${issuer}/.well-known/openid-configuration`);
  if (!response.ok) throw new Error(`issuer metadata: HTTP ${response.status}`);
  return response.json();
}

function jwtVerifier(issuer, jwksUri) {
  const jwks = jose.createRemoteJWKSet(new URL(jwksUri));
  return {
    async verifyAccessToken(token) {
      let payload;
      try {
        ({ payload } = await jose.jwtVerify(token, jwks, { issuer, typ: 'at+jwt', algorithms: ['RS256'] }));
      } catch (err) {
        throw new OAuthError(OAuthErrorCode.InvalidToken, `invalid access token (${err.code ?? 'error'})`);
      }
      const audience = Array.isArray(payload.aud) ? payload.aud[0] : payload.aud;
      return {
        token,
        clientId: String(payload.client_id ?? ''),
        scopes: String(payload.scope ?? '').split(' ').filter(Boolean),
        expiresAt: payload.exp,
        resource: audience ? new URL(audience) : undefined,
      };
    },
  };
}

// The fetch-shaped MCP handler behind Express (as in ts2_server.mjs).
function nodeHandler(handler) {
  return async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const response = await handler.fetch(new Request(`http://${req.headers.host}${req.originalUrl}`, {
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
  };
}

if (process.env.INTEROP_EXIT_ON_STDIN_EOF === '1') {
  process.stdin.on('end', () => process.exit(0)).on('error', () => process.exit(0)).resume();
}
const oauthMetadata = await authorizationServerMetadata(opts.issuer);
const httpServer = http.createServer();
httpServer.listen(Number(opts.port), '127.0.0.1', () => {
  const url = new URL(`http://127.0.0.1:${httpServer.address().port}/mcp`);
  const app = express();
  app.disable('x-powered-by');
  app.use(mcpAuthMetadataRouter({
    oauthMetadata,
    resourceServerUrl: url,
    scopesSupported,
    dangerouslyAllowInsecureIssuerUrl: true, // http on loopback
  }));
  const mcp = nodeHandler(createMcpHandler(buildServer));
  app.all('/mcp', requireBearerAuth({
    verifier: jwtVerifier(opts.issuer, oauthMetadata.jwks_uri),
    requiredScopes,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(url),
    expectedResource: url,
  }), (req, res) => {
    mcp(req, res).catch((err) => {
      console.error('ts2_oauth_server:', err);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  httpServer.on('request', app);
  console.log(`listening on ${url.href}`);
});
