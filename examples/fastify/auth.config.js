import Credentials from 'authchart/providers/credentials'
import OIDC from 'authchart/providers/oidc'
import { totp } from 'authchart/second-factor'
import { stepUp } from 'authchart/step-up'

// AUTH_SECRET, AUTH_OP_ID and AUTH_OP_SECRET come from the environment.
export const authConfig = {
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
    ...(process.env.AUTH_OP_ISSUER ? [OIDC({ id: 'op', name: 'Test OP', issuer: process.env.AUTH_OP_ISSUER })] : []),
  ],
}
