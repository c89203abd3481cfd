// A real authorization server for kura's OAuth tests: panva's certified
// OpenID provider (npm `oidc-provider`), on loopback, issuing JWT access
// tokens by the client-credentials grant for any resource asked for
// (RFC 8707), audience = that resource.
//
// Environment: OIDC_PROVIDER (the package's folder), PORT (0: any), KEYS
// (a JSON array of private JWKs; the first signs), SCOPES (space-separated),
// TTL (seconds an access token lives), FORMAT (`jwt`, or `opaque` for tokens
// only its introspection endpoint can read; kura asks it as the client
// `kura-rs`). Prints one line, {"issuer": URL}, once it listens.

import { pathToFileURL } from 'node:url';
import path from 'node:path';

const { default: Provider } = await import(
  pathToFileURL(path.join(process.env.OIDC_PROVIDER, 'lib', 'index.js')).href
);

const keys = JSON.parse(process.env.KEYS);
const scopes = process.env.SCOPES;
const ttl = Number(process.env.TTL || '300');
const format = process.env.FORMAT || 'jwt';

const configuration = {
  clients: [
    {
      client_id: 'kura-test',
      client_secret: 'kura-test-secret-0123456789',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    {
      client_id: 'kura-rs',
      client_secret: 'kura-rs-secret-0123456789',
      grant_types: [],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  jwks: { keys },
  ttl: { ClientCredentials: ttl },
  scopes: scopes.split(' '),
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => ({
        scope: scopes,
        audience: resource,
        accessTokenTTL: ttl,
        accessTokenFormat: format,
        jwt: { sign: { alg: keys[0].alg } },
      }),
    },
  },
};

const server = (await import('node:http')).createServer();
await new Promise((resolve) => server.listen(Number(process.env.PORT || '0'), '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;
const provider = new Provider(issuer, configuration);
server.on('request', provider.callback());
console.log(JSON.stringify({ issuer }));
