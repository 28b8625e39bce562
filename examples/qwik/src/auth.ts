import Credentials from 'authchart/providers/credentials'
import OIDC from 'authchart/providers/oidc'
import type { QwikAuthConfig } from 'authchart/qwik'
import { totp } from 'authchart/second-factor'
import { stepUp } from 'authchart/step-up'

let config: QwikAuthConfig | undefined

/** One config object for the app's life, so it is validated once (AUTH_SECRET etc. come from env). */
export function authConfig(env: { get(key: string): string | undefined }): QwikAuthConfig {
  const issuer = env.get('AUTH_OP_ISSUER')
  return (config ??= {
    pages: { signIn: '/login' },
    // The /security page asks for a recent sign-in (requireRecentAuth): step-up re-authentication
    // answers it on the spot, brought in by its import.
    secondFactor: totp(), // two-step verification at /auth/two-factor
    stepUp: stepUp(),
    providers: [
      Credentials({
        credentials: { username: { label: 'Username' }, password: { label: 'Password', type: 'password' } },
        authorize: ({ username, password }) =>
          username === 'alice' && password === 'wonderland' ? { id: 'alice', name: 'Alice', email: 'alice@example.com' } : null,
      }),
      ...(issuer ? [OIDC({ id: 'op', name: 'Test OP', issuer })] : []),
    ],
  })
}
