/**
 * The application every runtime of the matrix serves: one configuration with each kind of
 * provider (credentials, OIDC, an HTTP e-mail sender, passkeys), built from the runtime's
 * environment (`env`, as Workers hand it to `fetch`) and an adapter the entry chooses.
 *
 * @module
 */
import { Auth, customFetch, type AuthConfig } from 'authchart'
import type { Adapter } from 'authchart/adapters'
import Credentials from 'authchart/providers/credentials'
import OIDC from 'authchart/providers/oidc'
import Passkey from 'authchart/providers/passkey'
import Resend from 'authchart/providers/resend'

/** What the test hands every runtime. */
export interface RuntimeEnv {
  AUTH_SECRET: string
  /** The OpenID Provider (oidc-provider under Node, on loopback). */
  OP_ISSUER: string
  OP_CLIENT_SECRET: string
  /** The stand-in of Resend's API, on loopback. */
  MAIL_API: string
}

/** The user the credentials provider knows. */
export const RUNTIME_USER = { username: 'alice', password: 'wonderland' }

const RESEND_API = 'https://api.resend.com'

/** The configuration for `env`, over `adapter`. */
export function runtimeConfig(env: RuntimeEnv, adapter: Adapter): AuthConfig {
  return {
    secret: env.AUTH_SECRET,
    trustHost: true,
    adapter,
    // Credentials sign in with JWT sessions only (as in Auth.js), whatever the adapter.
    session: { strategy: 'jwt' },
    experimental: { enableWebAuthn: true },
    providers: [
      Credentials({
        credentials: { username: {}, password: { type: 'password' } },
        authorize: ({ username, password }) =>
          username === RUNTIME_USER.username && password === RUNTIME_USER.password
            ? { id: 'alice-1', name: 'Alice', email: 'alice@example.com' }
            : null,
      }),
      OIDC({ id: 'op', name: 'Local OP', issuer: env.OP_ISSUER, clientId: 'runtime-app', clientSecret: env.OP_CLIENT_SECRET }),
      Resend({
        from: 'no-reply@example.com',
        apiKey: 'stand-in-key',
        code: true,
        // The stand-in sender: Resend's documented call, answered on loopback.
        [customFetch]: (input: string | URL | Request, init?: RequestInit) =>
          fetch(String(input instanceof Request ? input.url : input).replace(RESEND_API, env.MAIL_API), init),
      }),
      Passkey({ relayingParty: { id: 'localhost', name: 'Runtime matrix', origin: 'http://localhost' } }),
    ],
  }
}

/** A fetch handler for `env`: the configuration is built once, on the first request. */
export function runtimeHandler(adapter: () => Adapter | Promise<Adapter>) {
  let config: Promise<AuthConfig> | undefined
  return async (request: Request, env: RuntimeEnv): Promise<Response> => {
    config ??= Promise.resolve(adapter()).then((made) => runtimeConfig(env, made))
    const url = new URL(request.url)
    if (url.pathname === '/health') return new Response('ok')
    return Auth(request, await config)
  }
}
