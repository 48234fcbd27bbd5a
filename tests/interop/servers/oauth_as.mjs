// OAuth lab: a real authorization server (panva's oidc-provider 9.x) configured for MCP,
// for agenthealth's OAuth interop tests. Hermetic: binds 127.0.0.1 only.
//
//   node --preserve-symlinks-main $AGENTHEALTH_INTEROP_DIR/servers/oauth_as.mjs
//        [--issuer-path /tenant] [--access-token-ttl SECONDS] [--refresh-token-ttl SECONDS]
//        [--auth-methods client_secret_basic,client_secret_post,none] [--port N]
//        [--refresh-policy lab|stock] [--par optional|required] [--registration]
//
// * --refresh-policy stock: oidc-provider's own issueRefreshToken (a refresh token only when
//   offline_access was granted, which needs prompt=consent in the authorization request);
//   lab (the default) issues one to every client allowed the refresh_token grant.
// * --par required: features.pushedAuthorizationRequests.requirePushedAuthorizationRequests:
//   the metadata says require_pushed_authorization_requests: true and /auth without a
//   request_uri answers error=invalid_request on the redirect (PAR is offered either way).
// * --registration: features.registration (RFC 7591, open registration, no initial access
//   token); dynamically registered clients are logged in `registrations`.
//
// Prints `listening on ISSUER` once bound (ISSUER = http://127.0.0.1:PORT plus the
// --issuer-path, if any) and, with INTEROP_EXIT_ON_STDIN_EOF=1, exits when stdin closes.
//
// What it is configured to do (see tests/interop/README.md, "OAuth lab"):
// * the pre-registered clients listed in CLIENTS below (and, with --registration, any that
//   register);
// * RFC 8707 resource indicators: any `http://127.0.0.1:<port>/mcp` is a resource server
//   whose scopes are `read write`; its access tokens are RFC 9068 JWTs (RS256, typ at+jwt)
//   with that URL as audience, living --access-token-ttl seconds (default 300);
// * refresh tokens (with the default --refresh-policy lab) for every client allowed the
//   refresh_token grant (stock oidc-provider only issues them with a consented
//   `offline_access`), rotated on every use;
// * PKCE required for every client;
// * token endpoint client authentication is strict, which stock oidc-provider is not: a
//   method outside --auth-methods, or other than the client's registered one, is refused
//   with 401 invalid_client; the metadata advertises exactly --auth-methods;
// * headless approval: the interaction page is a plain HTML form; POSTing it (decision=approve
//   or deny) logs in the fixed user `lab-user` and grants everything asked, via the Grant API.
//
// Test-only routes outside the issuer: GET /_lab/log (every request, every token request
// with the auth method that arrived and the tokens issued, every auth-method refusal, the
// registrations, refresh_token_replays — a rotated-out refresh token presented again, which
// makes the provider revoke the grant — grants_revoked and par_requests) and POST /_lab/reset
// (empties the log).
import http from 'node:http';
import { parseArgs } from 'node:util';
import express from 'express';
import * as jose from 'jose';
import Provider, { errors } from 'oidc-provider';

const { values: opts } = parseArgs({
  options: {
    'issuer-path': { type: 'string', default: '' },
    'access-token-ttl': { type: 'string', default: '300' },
    'refresh-token-ttl': { type: 'string', default: '86400' },
    'auth-methods': { type: 'string', default: 'client_secret_basic,client_secret_post,none' },
    port: { type: 'string', default: '0' },
    'refresh-policy': { type: 'string', default: 'lab' },
    par: { type: 'string', default: 'optional' },
    registration: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
const KNOWN_METHODS = ['client_secret_basic', 'client_secret_post', 'none'];
const issuerPath = opts['issuer-path'].replace(/\/+$/, '');
const accessTtl = Number(opts['access-token-ttl']);
const refreshTtl = Number(opts['refresh-token-ttl']);
const methods = opts['auth-methods'].split(',').filter(Boolean);
if (
  opts.help
  || !(issuerPath === '' || /^\/[A-Za-z0-9._~/-]+$/.test(issuerPath))
  || !(Number.isInteger(accessTtl) && accessTtl > 0)
  || !(Number.isInteger(refreshTtl) && refreshTtl > 0)
  || methods.length === 0
  || !methods.every((m) => KNOWN_METHODS.includes(m))
  || !['lab', 'stock'].includes(opts['refresh-policy'])
  || !['optional', 'required'].includes(opts.par)
) {
  console.error('usage: oauth_as.mjs [--issuer-path /PATH] [--access-token-ttl S] [--refresh-token-ttl S] [--auth-methods M,M] [--port N] [--refresh-policy lab|stock] [--par optional|required] [--registration]');
  process.exit(2);
}

// The pre-registered clients. Their ids and secrets are repeated in tests/interop/oauth.rs.
const CLIENTS = [
  {
    client_id: 'lab-basic',
    client_secret: 'lab-basic-secret-2f9c41',
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    scope: 'read write admin',
  },
  {
    client_id: 'lab-post',
    client_secret: 'lab-post-secret-8d0e77',
    token_endpoint_auth_method: 'client_secret_post',
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    scope: 'read write admin',
  },
  {
    // RFC 6749 §2.3.1: sent with Basic, this secret only works form-encoded first.
    client_id: 'lab-odd',
    client_secret: 'odd%25secret+with:colon and space',
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    scope: 'read write',
  },
  {
    // RFC 8252 §7.3: a native client's loopback redirect matches on any port.
    client_id: 'lab-native',
    application_type: 'native',
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: ['http://127.0.0.1/callback'],
    scope: 'read write admin offline_access',
  },
  {
    client_id: 'lab-web',
    client_secret: 'lab-web-secret-5a6b13',
    application_type: 'web',
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: ['http://127.0.0.1:8765/callback'],
    scope: 'read write admin offline_access',
  },
];
const RESOURCE = /^http:\/\/127\.0\.0\.1:[0-9]{1,5}\/mcp$/;
const RESOURCE_SCOPE = 'read write';

// --- the log the tests read through GET /_lab/log ---
const log = {
  requests: [], token_requests: [], refused: [], registrations: [],
  refresh_token_replays: 0, grants_revoked: 0, par_requests: 0,
};

function basicCredentials(header) {
  const match = /^Basic ([A-Za-z0-9+/=]*)$/.exec(header ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const formDecode = (s) => {
    try {
      return decodeURIComponent(s.replace(/\+/g, '%20'));
    } catch {
      return s;
    }
  };
  return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
}

// The client authentication method a token request carries, as RFC 7591 names it.
function arrivedMethod(req, form) {
  const basic = /^Basic /i.test(req.headers.authorization ?? '');
  const post = form.has('client_secret');
  if (basic && post) return 'multiple';
  if (basic) return 'client_secret_basic';
  if (post) return 'client_secret_post';
  if (form.has('client_assertion')) return 'client_assertion';
  return 'none';
}

const server = http.createServer();
server.listen(Number(opts.port), '127.0.0.1', async () => {
  const origin = `http://127.0.0.1:${server.address().port}`;
  const issuer = `${origin}${issuerPath}`;

  const { privateKey } = await jose.generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await jose.exportJWK(privateKey)), kid: 'lab-rs256', alg: 'RS256', use: 'sig' };

  const provider = new Provider(issuer, {
    clients: CLIENTS.filter((c) => methods.includes(c.token_endpoint_auth_method)),
    clientAuthMethods: methods,
    jwks: { keys: [jwk] },
    cookies: { keys: ['agenthealth-oauth-lab-cookie-key'] },
    scopes: ['openid', 'offline_access', 'read', 'write', 'admin'],
    responseTypes: ['code'],
    pkce: { required: () => true },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      registration: { enabled: opts.registration, initialAccessToken: false },
      pushedAuthorizationRequests: {
        enabled: true,
        requirePushedAuthorizationRequests: opts.par === 'required',
      },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, _client, oneOf) => oneOf,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          if (!RESOURCE.test(resource)) throw new errors.InvalidTarget();
          return {
            scope: RESOURCE_SCOPE,
            audience: resource,
            accessTokenTTL: accessTtl,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    ttl: {
      AccessToken: accessTtl,
      ClientCredentials: accessTtl,
      RefreshToken: refreshTtl,
      AuthorizationCode: 60,
      Grant: refreshTtl,
      Interaction: 600,
      Session: refreshTtl,
      IdToken: accessTtl,
    },
    ...(opts['refresh-policy'] === 'lab'
      ? { issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token') }
      : {}),
    rotateRefreshToken: true,
  });
  // Plain http on loopback: keep cookies usable without TLS.
  provider.proxy = false;

  // Replays of rotated refresh tokens: the refresh_token grant destroys a consumed token
  // presented again, revokes its grant (event grant.revoked) and answers invalid_grant; the
  // words that tell a replay from other invalid grants are in err.error_detail (its
  // error_description is the generic "grant request is invalid").
  provider.on('grant.error', (_ctx, err) => {
    if (err?.error === 'invalid_grant' && err?.error_detail === 'refresh token already used') {
      log.refresh_token_replays += 1;
    }
  });
  provider.on('grant.revoked', () => { log.grants_revoked += 1; });
  provider.on('pushed_authorization_request.saved', () => { log.par_requests += 1; });
  provider.on('registration_create.success', (_ctx, client) => {
    log.registrations.push({
      client_id: client.clientId,
      token_endpoint_auth_method: client.tokenEndpointAuthMethod,
      application_type: client.applicationType,
      grant_types: client.grantTypes,
      redirect_uris: client.redirectUris,
    });
  });

  const app = express();
  app.disable('x-powered-by');
  app.use((req, res, next) => {
    // The path as sent: Express rewrites req.url for the mounted provider.
    const path = req.originalUrl.split('?')[0];
    res.on('finish', () => log.requests.push({ method: req.method, path, status: res.statusCode }));
    next();
  });

  app.get('/_lab/log', (_req, res) => res.json(log));
  app.post('/_lab/reset', (_req, res) => {
    log.requests.length = 0;
    log.token_requests.length = 0;
    log.refused.length = 0;
    log.registrations.length = 0;
    log.refresh_token_replays = 0;
    log.grants_revoked = 0;
    log.par_requests = 0;
    res.status(204).end();
  });

  // The approval page: one form, no script. The lab's scripted browser reads its action.
  app.get('/interaction/:uid', async (req, res, next) => {
    try {
      const details = await provider.interactionDetails(req, res);
      const action = `/interaction/${details.uid}/decide`;
      res.type('html').send(`<!doctype html>
<title>Authorize ${details.params.client_id}</title>
<p>Client <b>${details.params.client_id}</b> asks for <code>${details.params.scope ?? ''}</code>
on <code>${details.params.resource ?? ''}</code> (${details.prompt.name}).</p>
<form method="post" action="${action}">
<input type="hidden" name="decision" value="approve"><button type="submit">Approve</button>
</form>
<form method="post" action="${action}">
<input type="hidden" name="decision" value="deny"><button type="submit">Deny</button>
</form>
`);
    } catch (err) {
      next(err);
    }
  });

  app.post('/interaction/:uid/decide', express.urlencoded({ extended: false }), async (req, res, next) => {
    try {
      const details = await provider.interactionDetails(req, res);
      if (req.body.decision !== 'approve') {
        await provider.interactionFinished(req, res, {
          error: 'access_denied',
          error_description: 'the lab user denied the request',
        }, { mergeWithLastSubmission: false });
        return;
      }
      // Log in, and grant everything asked at once (scopes and the resource's scopes), so
      // no separate consent round trip follows.
      const accountId = 'lab-user';
      const { params } = details;
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId, clientId: params.client_id });
      const asked = String(params.scope ?? '').split(' ').filter(Boolean);
      const oidcScopes = asked.filter((s) => s === 'openid' || s === 'offline_access');
      if (oidcScopes.length) grant.addOIDCScope(oidcScopes.join(' '));
      if (params.resource) grant.addResourceScope(params.resource, asked.join(' '));
      const missing = details.prompt.details ?? {};
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
      for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
        grant.addResourceScope(indicator, scopes.join(' '));
      }
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, {
        login: { accountId },
        consent: { grantId },
      }, { mergeWithLastSubmission: true });
    } catch (err) {
      next(err);
    }
  });

  // The token endpoint: read the form once, record which client authentication arrived,
  // refuse what is not advertised or not registered, record what was issued.
  const tokenPath = `${issuerPath}/token`;
  app.post(tokenPath, express.raw({ type: () => true, limit: '64kb' }), (req, res, next) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const form = new URLSearchParams(raw.toString('utf8'));
    const method = arrivedMethod(req, form);
    const basic = basicCredentials(req.headers.authorization);
    const clientId = basic?.id ?? form.get('client_id') ?? undefined;
    const registered = CLIENTS.find((c) => c.client_id === clientId)?.token_endpoint_auth_method;
    const entry = {
      grant_type: form.get('grant_type'),
      auth_method: method,
      client_id: clientId ?? null,
      resource: form.getAll('resource'),
      scope: form.get('scope'),
      status: null,
      error: null,
      access_token: null,
      refresh_token: null,
      scope_granted: null,
      expires_in: null,
    };
    log.token_requests.push(entry);
    let refusal;
    if (!methods.includes(method)) {
      refusal = `client authentication method ${method} is not advertised`;
    } else if (registered !== undefined && method !== registered) {
      refusal = `client ${clientId} is registered for ${registered}, not ${method}`;
    }
    if (refusal) {
      log.refused.push({ client_id: clientId ?? null, auth_method: method, reason: refusal });
      entry.status = 401;
      entry.error = 'invalid_client';
      res.status(401).set('WWW-Authenticate', 'Basic realm="oauth-lab"')
        .json({ error: 'invalid_client', error_description: refusal });
      return;
    }
    // Capture the answer for the log (the tests check no issued token leaks into output).
    const chunks = [];
    const write = res.write.bind(res);
    const end = res.end.bind(res);
    res.write = (chunk, ...rest) => {
      if (chunk) chunks.push(Buffer.from(chunk));
      return write(chunk, ...rest);
    };
    res.end = (chunk, ...rest) => {
      if (chunk && typeof chunk !== 'function') chunks.push(Buffer.from(chunk));
      entry.status = res.statusCode;
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        entry.error = body.error ?? null;
        entry.access_token = body.access_token ?? null;
        entry.refresh_token = body.refresh_token ?? null;
        entry.scope_granted = body.scope ?? null;
        entry.expires_in = body.expires_in ?? null;
      } catch {
        // not JSON: leave the fields empty
      }
      return end(chunk, ...rest);
    };
    req.body = raw; // oidc-provider parses a pre-read Buffer body itself
    next();
  });

  const oidc = provider.callback();
  if (issuerPath) {
    app.use(issuerPath, oidc);
  } else {
    app.use(oidc);
  }

  server.on('request', app);
  if (process.env.INTEROP_EXIT_ON_STDIN_EOF === '1') {
    process.stdin.on('end', () => process.exit(0)).on('error', () => process.exit(0)).resume();
  }
  console.log(`listening on ${issuer}`);
});
