// A real OpenID Connect provider on loopback for the single sign-on tests: `oidc-provider`
// (npm, OpenID-certified), configured here with our clients, a login page of our own and the
// test users, read from files that each test writes (tests/oidc_server.py starts it once per
// test session).
//
//   node tests/oidc_provider.mjs CONFIG.json
//
// CONFIG names: modules (the node_modules folder oidc-provider was installed into),
// accounts (a folder of ACCOUNT.json files: password, email, name, groups, and optionally a
// fault), and clients (oidc-provider's client metadata). The provider listens on a free
// loopback port and prints one JSON line, {"issuer": ...}, when it is ready.
//
// A user's "fault" makes the provider misbehave for that user only, as a compromised or
// misconfigured provider (or one an attacker stands in front of) would: the token endpoint's
// ID token is re-signed, with the provider's own key, after one claim was changed:
//   issuer    iss names another issuer (the same key serving two issuers, as multi-tenant
//             providers do)
//   audience  aud names the provider's other client
//   expired   exp (and iat) an hour in the past
//   nonce     a nonce that is not the one the client sent
//   signature signed by a key the provider does not publish (same key id)
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const require = createRequire(join(config.modules, 'noop.js'));
const load = (name) => import(pathToFileURL(require.resolve(name)).href);
const { default: Provider } = await load('oidc-provider');
const jose = await load('jose');

const ACCOUNT_ID = /^[A-Za-z0-9_-]{1,64}$/;
const SCOPES = 'openid email profile groups';

function readAccount(id) {
  if (!ACCOUNT_ID.test(id)) return null;
  try {
    return JSON.parse(readFileSync(join(config.accounts, `${id}.json`), 'utf8'));
  } catch {
    return null;
  }
}

async function signingKey(kid) {
  const { privateKey } = await jose.generateKeyPair('RS256', { extractable: true });
  const jwk = await jose.exportJWK(privateKey);
  return { privateKey, jwk: { ...jwk, kid, alg: 'RS256', use: 'sig' } };
}

const escape = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title, body) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>${escape(title)}</title></head>
<body><main><h1>${escape(title)}</h1>${body}</main></body></html>`;
}

function loginForm(uid, error) {
  return page('Test provider sign-in', `${error ? `<p role="alert">${escape(error)}</p>` : ''}
<form method="post" action="/interaction/${escape(uid)}">
<label>Login <input name="login" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button></form>`);
}

async function formBody(ctx) {
  const chunks = [];
  for await (const chunk of ctx.req) chunks.push(chunk);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;
const { privateKey, jwk } = await signingKey('test-key');
const stranger = await signingKey('test-key'); // same kid, a key nobody publishes

const provider = new Provider(issuer, {
  clients: config.clients,
  jwks: { keys: [jwk] },
  cookies: { keys: [randomBytes(16).toString('hex')] },
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'preferred_username', 'given_name', 'family_name'],
    groups: ['groups'],
  },
  scopes: SCOPES.split(' '),
  pkce: { required: () => true }, // every authorization request must carry a S256 challenge
  features: {
    devInteractions: { enabled: false },
    rpInitiatedLogout: {
      enabled: true,
      async logoutSource(ctx, form) {
        ctx.body = page('Sign out of the test provider?', `${form}
<button type="submit" form="op.logoutForm" name="logout" value="yes">Yes, sign me out</button>`);
      },
      async postLogoutSuccessSource(ctx) {
        ctx.body = page('Signed out of the test provider', '');
      },
    },
  },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  // Our clients are first-party: the user is never asked to consent.
  async loadExistingGrant(ctx) {
    const grantId = ctx.oidc.result?.consent?.grantId
      || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) return ctx.oidc.provider.Grant.find(grantId);
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId,
      accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope(SCOPES);
    await grant.save();
    return grant;
  },
  async findAccount(ctx, id) {
    const account = readAccount(id);
    if (!account) return undefined;
    return {
      accountId: id,
      async claims() {
        const now = readAccount(id) || account; // a test may change it between logins
        const claims = { sub: id, email: now.email, email_verified: true, name: now.name };
        for (const name of ['preferred_username', 'given_name', 'family_name', 'groups']) {
          if (now[name] !== undefined) claims[name] = now[name];
        }
        return claims;
      },
    };
  },
  async renderError(ctx, out) {
    ctx.type = 'html';
    ctx.body = page('Test provider error', Object.entries(out)
      .map(([key, value]) => `<p><strong>${escape(key)}</strong>: ${escape(value)}</p>`).join(''));
  },
});

// The login page: a form, the password checked against the account's file.
provider.use(async (ctx, next) => {
  const match = ctx.path.match(/^\/interaction\/([\w-]+)$/);
  if (!match) return next();
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  if (details.prompt.name !== 'login') ctx.throw(501, `prompt ${details.prompt.name}`);
  ctx.set('Cache-Control', 'no-store');
  ctx.type = 'html';
  if (ctx.method === 'GET') {
    ctx.body = loginForm(match[1]);
    return undefined;
  }
  const form = await formBody(ctx);
  const login = form.get('login') || '';
  const account = readAccount(login);
  if (!account || account.password !== form.get('password')) {
    ctx.status = 401;
    ctx.body = loginForm(match[1], 'Wrong login or password.');
    return undefined;
  }
  const to = await provider.interactionResult(ctx.req, ctx.res, { login: { accountId: login } }, {
    mergeWithLastSubmission: false,
  });
  ctx.status = 303;
  ctx.redirect(to);
  return undefined;
});

// The faults (see the top of this file): the token endpoint's answer, changed on its way out.
provider.use(async (ctx, next) => {
  await next();
  if (ctx.oidc?.route !== 'token' || ctx.status !== 200 || !ctx.body?.id_token) return;
  const claims = jose.decodeJwt(ctx.body.id_token);
  const fault = readAccount(claims.sub)?.fault;
  if (!fault) return;
  const now = Math.floor(Date.now() / 1000);
  let key = privateKey;
  if (fault === 'issuer') claims.iss = `${issuer}/another-tenant`;
  else if (fault === 'audience') claims.aud = 'another-app';
  else if (fault === 'expired') Object.assign(claims, { iat: now - 7200, exp: now - 3600 });
  else if (fault === 'nonce') claims.nonce = 'a-nonce-from-another-sign-in';
  else if (fault === 'signature') key = stranger.privateKey;
  else throw new Error(`unknown fault ${fault}`);
  const idToken = await new jose.SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', kid: jwk.kid, typ: 'JWT' })
    .sign(key);
  ctx.body = { ...ctx.body, id_token: idToken };
});

server.on('request', provider.callback());
process.stdout.write(`${JSON.stringify({ issuer })}\n`);
