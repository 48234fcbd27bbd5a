// OAuth lab: the "client under test" that the official conformance suite
// (@modelcontextprotocol/conformance) runs for its client auth/* scenarios. It plays the
// operator: it writes an agenthealth configuration for a pre-registered client and runs the
// agenthealth binary, which does all the OAuth itself.
//
//   AGENTHEALTH_BIN=… [AGENTHEALTH_CONFORMANCE_DIR=…] node conformance_client.mjs SERVER_URL
//
// The suite appends SERVER_URL and sets MCP_CONFORMANCE_SCENARIO,
// MCP_CONFORMANCE_PROTOCOL_VERSION and, for some scenarios, MCP_CONFORMANCE_CONTEXT (JSON:
// client_id, client_secret, sometimes issuer).
//
// What the operator knows, and so what this script decides (agenthealth decides the rest):
// * the issuer to pin: the context's `issuer`, else the first `authorization_servers` entry
//   of the protected-resource metadata (RFC 9728 path-inserted location, then the root,
//   then the `resource_metadata` of an unauthenticated POST's challenge);
// * the issuer of a 2025-03-26 server without protected-resource metadata: what the MCP
//   origin's RFC 8414 document names, else the origin itself (what `doctor` tells an operator);
// * the registration: the context's client, else none: `agenthealth login --register`
//   registers one (RFC 7591) and the configuration omits client_id;
// * the grant: client_credentials when the server's metadata offers only that grant,
//   otherwise authorization_code through `agenthealth login`;
// * the protocol revision to pin: MCP_CONFORMANCE_PROTOCOL_VERSION.
// It never picks the client authentication method, the scopes, or whether to accept a
// callback: those are agenthealth's.
//
// Login: reads `Open this URL to authorize AgentHealth:` and the URL on the next line from
// agenthealth's stdout, GETs the URL without following redirects (the suite's authorization
// endpoint answers at once with a redirect to the callback), delivers a redirect to the
// 127.0.0.1 callback, waits for login to exit, then runs `check` with the saved token.
// Exit status: agenthealth's (login's when it failed, else check's: 0 = HEALTHY).
// Everything agenthealth printed goes to this script's stderr (the suite keeps it).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const serverUrl = process.argv[2];
const bin = process.env.AGENTHEALTH_BIN;
if (!serverUrl || !bin) {
  console.error('usage: AGENTHEALTH_BIN=… node conformance_client.mjs SERVER_URL (run by the conformance suite)');
  process.exit(2);
}
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const revision = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION;
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');
const RUN_LIMIT_MS = 20_000;
const say = (line) => console.error(`conformance_client[${scenario}]: ${line}`);

async function getJson(url) {
  try {
    const response = await fetch(url, { redirect: 'manual', headers: { Accept: 'application/json' } });
    return response.ok ? await response.json() : undefined;
  } catch {
    return undefined;
  }
}

async function protectedResourceMetadata() {
  const url = new URL(serverUrl);
  const candidates = [];
  if (url.pathname !== '/' && url.pathname !== '') {
    candidates.push(`${url.origin}/.well-known/oauth-protected-resource${url.pathname}`);
  }
  candidates.push(`${url.origin}/.well-known/oauth-protected-resource`);
  for (const candidate of candidates) {
    const prm = await getJson(candidate);
    if (prm) return prm;
  }
  // Last: the challenge of an unauthenticated request names the metadata.
  try {
    const response = await fetch(serverUrl, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'ping' }),
    });
    const match = /resource_metadata="([^"]+)"/.exec(response.headers.get('www-authenticate') ?? '');
    if (match) return getJson(match[1]);
  } catch {
    // fall through
  }
  return undefined;
}

async function authorizationServerMetadata(issuer) {
  const url = new URL(issuer);
  const trimmed = url.pathname.replace(/\/$/, '');
  return (await getJson(`${url.origin}/.well-known/oauth-authorization-server${trimmed}`))
    ?? (await getJson(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`))
    ?? {};
}

// Runs agenthealth; killed after `limitMs` (the suite's own timeout is 30 s).
function run(args, env, limitMs, onStdoutLine) {
  return new Promise((resolve) => {
    const child = spawn(bin, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => {
      say(`${args[0]} still running after ${limitMs} ms: killed`);
      child.kill('SIGKILL');
    }, limitMs);
    let buffered = '';
    child.stdout.on('data', (chunk) => {
      process.stderr.write(chunk);
      buffered += chunk.toString();
      let newline;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        onStdoutLine?.(line, child);
      }
    });
    child.stderr.on('data', (chunk) => process.stderr.write(chunk));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve(code ?? (signal ? 128 : 1));
    });
  });
}

async function deliver(authorizationUrl) {
  try {
    const response = await fetch(authorizationUrl, { redirect: 'manual' });
    const location = response.headers.get('location');
    say(`authorization endpoint: HTTP ${response.status}`);
    if (!location) return;
    const callback = new URL(location, authorizationUrl);
    if (callback.hostname !== '127.0.0.1') {
      say(`not a loopback callback, not delivered: ${callback.origin}${callback.pathname}`);
      return;
    }
    const answer = await fetch(callback, { redirect: 'manual' });
    say(`callback: HTTP ${answer.status}`);
  } catch (err) {
    say(`delivery failed: ${err.message}`);
  }
}

const prm = await protectedResourceMetadata();
let issuer = context.issuer ?? prm?.authorization_servers?.[0];
if (!issuer && !prm) {
  // 2025-03-26: no protected-resource metadata; the authorization server is the MCP origin.
  const origin = new URL(serverUrl).origin;
  issuer = (await getJson(`${origin}/.well-known/oauth-authorization-server`))?.issuer ?? origin;
}
if (!issuer) {
  say('no issuer: neither the context nor protected-resource metadata names one');
  process.exit(1);
}
const asMeta = await authorizationServerMetadata(issuer);
const clientId = context.client_id;
const secret = context.client_secret;
const register = !clientId;
const grants = asMeta.grant_types_supported ?? ['authorization_code'];
const grant = secret && grants.includes('client_credentials') && !grants.includes('authorization_code')
  ? 'client_credentials'
  : 'authorization_code';

const dir = process.env.AGENTHEALTH_CONFORMANCE_DIR
  ?? fs.mkdtempSync(path.join(os.tmpdir(), 'agenthealth-conformance-'));
fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
const quote = (s) => `'${String(s).replace(/'/g, "''")}'`;
const config = path.join(dir, 'agenthealth.yaml');
const lines = [
  'version: v1',
  'targets:',
  '  - name: conformance',
  '    type: mcp',
  `    endpoint: ${quote(serverUrl)}`,
  '    mcp:',
  ...(revision ? [`      protocol_version: ${quote(revision)}`] : []),
  '      oauth:',
  `        issuer: ${quote(issuer)}`,
  ...(clientId ? [`        client_id: ${quote(clientId)}`] : []),
  `        grant: ${grant}`,
  ...(secret ? ['        client_secret_env: CONFORMANCE_CLIENT_SECRET'] : []),
  ...(grant === 'authorization_code' ? [`        token_file: ${quote(path.join(dir, 'tokens', 'conformance.json'))}`] : []),
];
fs.writeFileSync(config, `${lines.join('\n')}\n`);
say(`issuer ${issuer}, client ${clientId ?? '(register)'} (${secret ? 'confidential' : 'public or registered'}), grant ${grant}`);

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? dir };
if (secret) env.CONFORMANCE_CLIENT_SECRET = secret;

if (grant === 'authorization_code') {
  let announced = false;
  let urlNext = false;
  const loginArgs = ['login', config, 'conformance', ...(register ? ['--register'] : [])];
  const loginCode = await run(loginArgs, env, RUN_LIMIT_MS, (line) => {
    if (urlNext && !announced) {
      announced = true;
      deliver(line.trim());
    }
    urlNext = line.trim() === 'Open this URL to authorize AgentHealth:';
  });
  say(`login exited ${loginCode}`);
  if (loginCode !== 0) process.exit(loginCode);
}
const checkCode = await run(['check', config, '--format', 'json'], env, RUN_LIMIT_MS);
say(`check exited ${checkCode}`);
process.exit(checkCode);
