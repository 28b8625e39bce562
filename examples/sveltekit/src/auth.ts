import Credentials from 'authchart/providers/credentials'
import OIDC from 'authchart/providers/oidc'
import type { SvelteKitAuthConfig } from 'authchart/sveltekit'
import { env } from '$env/dynamic/private'
import { totp } from 'authchart/second-factor'
import { stepUp } from 'authchart/step-up'

// AUTH_SECRET, AUTH_TRUST_HOST, AUTH_OP_ID and AUTH_OP_SECRET come from the environment.
export const authConfig: SvelteKitAuthConfig = {
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
    ...(env.AUTH_OP_ISSUER ? [OIDC({ id: 'op', name: 'Test OP', issuer: env.AUTH_OP_ISSUER })] : []),
  ],
}
