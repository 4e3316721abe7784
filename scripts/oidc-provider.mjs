// A real OpenID Connect provider for the tests: the npm `oidc-provider` package (installed by
// scripts/oidc-provider.sh into the folder named by OIDC_PROVIDER_DIR), configured for the
// client credentials grant with JWT access tokens.
//
// Usage: node scripts/oidc-provider.mjs '<json configuration>'
//   {
//     "port": 0,                      // 0: any free port
//     "audience": "hosted-checkout",  // the access tokens' `aud` (the one resource server)
//     "alg": "RS256",                 // the access tokens' signing algorithm
//     "keys": [<private JWK>, ...],   // optional: the signing keys, the first signs
//     "auth_methods": [...],          // optional: the token endpoint's client auth methods
//     "tls": {"key": "<PEM>", "cert": "<PEM>"},  // optional: serve https with this certificate
//     "clients": [{
//       "client_id": "...", "client_secret": "...",
//       "auth_method": "client_secret_basic" | "client_secret_post",
//       "ttl": 600,                   // access token lifetime, seconds
//       "claims": {...}               // claims added to its access tokens (roles, realm_access…)
//     }]
//   }
//
// When it listens it prints one line of JSON, {"issuer": "http(s)://127.0.0.1:<port>"}. Test-only
// routes beside the provider's own:
//   POST /__test/rotate   a new signing key first, the old ones kept in the JWKS; answers {kid}
//   POST /__test/retire   keeps only the signing key in the JWKS
//   GET  /__test/keys     the private signing keys (to restart an identical provider)
//   GET  /__test/public-pem  the signing key's public key, SPKI PEM
//   GET  /__test/stats    {"jwks": <how many times the JWKS was fetched>}
//   POST /__test/sign     {"header": {...}, "claims": {...}, "foreign": false}: a JWS over them
//                         (alg RS256 and the signing key's kid unless the header says), signed
//                         by the signing key, or with "foreign": true by a key of no JWKS
// Only for tests: it keeps everything in memory and its admin routes are unauthenticated.
import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import {
  createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign,
} from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = process.env.OIDC_PROVIDER_DIR;
if (!dir) {
  console.error('OIDC_PROVIDER_DIR must name the folder scripts/oidc-provider.sh printed');
  process.exit(2);
}
const { default: Provider } = await import(
  pathToFileURL(join(dir, 'node_modules', 'oidc-provider', 'lib', 'index.js')).href
);

const config = JSON.parse(process.argv[2] ?? '{}');
const audience = config.audience ?? 'hosted-checkout';
const alg = config.alg ?? 'RS256';
const resource = 'urn:hosted-checkout:api';
const clients = config.clients ?? [];
const byId = new Map(clients.map((c) => [c.client_id, c]));

function newKey() {
  let pair;
  if (alg.startsWith('ES')) {
    pair = generateKeyPairSync('ec', { namedCurve: alg === 'ES384' ? 'P-384' : 'P-256' });
  } else if (alg === 'EdDSA') {
    pair = generateKeyPairSync('ed25519');
  } else {
    pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  }
  const jwk = pair.privateKey.export({ format: 'jwk' });
  return { ...jwk, kid: randomBytes(9).toString('base64url'), use: 'sig', alg };
}

let keys = config.keys?.length ? config.keys : [newKey()];
const foreignKey = newKey();

function jws(header, claims, jwk) {
  const b64 = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${b64({ alg: 'RS256', typ: 'at+jwt', kid: keys[0].kid, ...header })}.${b64(claims)}`;
  const signature = sign('sha256', Buffer.from(input), createPrivateKey({ key: jwk, format: 'jwk' }));
  return `${input}.${signature.toString('base64url')}`;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    let data = '';
    req.on('data', (chunk) => { data += chunk; });
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}

const server = config.tls ? createTlsServer({ key: config.tls.key, cert: config.tls.cert }) : createServer();
await new Promise((resolve) => server.listen(config.port ?? 0, '127.0.0.1', resolve));
const issuer = `${config.tls ? 'https' : 'http'}://127.0.0.1:${server.address().port}`;

function build() {
  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({
      client_id: c.client_id,
      client_secret: c.client_secret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: c.auth_method ?? 'client_secret_basic',
    })),
    jwks: { keys },
    ...(config.auth_methods ? { clientAuthMethods: config.auth_methods } : {}),
    cookies: { keys: [randomBytes(16).toString('hex')] },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: false },
      revocation: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: 'payments',
          audience,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg } },
        }),
      },
    },
    ttl: {
      ClientCredentials: (_ctx, _token, client) => byId.get(client.clientId)?.ttl ?? 600,
    },
    extraTokenClaims: (_ctx, token) => byId.get(token.clientId)?.claims ?? {},
  });
  provider.on('server_error', (_ctx, err) => console.error('server_error', err));
  return provider.callback();
}

let handler = build();
let jwksFetches = 0;

server.on('request', (req, res) => {
  const answer = (status, body) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.url === '/__test/rotate' && req.method === 'POST') {
    keys = [newKey(), ...keys];
    handler = build();
    return answer(200, { kid: keys[0].kid });
  }
  if (req.url === '/__test/retire' && req.method === 'POST') {
    keys = [keys[0]];
    handler = build();
    return answer(200, { kid: keys[0].kid });
  }
  if (req.url === '/__test/keys' && req.method === 'GET') {
    return answer(200, { keys });
  }
  if (req.url === '/__test/public-pem' && req.method === 'GET') {
    const pem = createPublicKey({ key: keys[0], format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    return answer(200, { pem });
  }
  if (req.url === '/__test/stats' && req.method === 'GET') {
    return answer(200, { jwks: jwksFetches });
  }
  if (req.url.startsWith('/jwks')) {
    jwksFetches += 1;
  }
  if (req.url === '/__test/sign' && req.method === 'POST') {
    return readBody(req).then((body) => {
      const { header = {}, claims = {}, foreign = false } = JSON.parse(body);
      answer(200, { token: jws(header, claims, foreign ? foreignKey : keys[0]) });
    }).catch((err) => answer(400, { error: String(err) }));
  }
  return handler(req, res);
});

process.stdout.write(`${JSON.stringify({ issuer })}\n`);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
