import NextAuth from 'authchart/next'
import Credentials from 'authchart/providers/credentials'
import OIDC from 'authchart/providers/oidc'
import { totp } from 'authchart/second-factor'
import { stepUp } from 'authchart/step-up'

// AUTH_SECRET, AUTH_TRUST_HOST, AUTH_OP_ID and AUTH_OP_SECRET come from the environment.
export const { handlers, auth, signIn, signOut, unstable_update, requireRecentAuth } = NextAuth({
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
    ...(process.env.AUTH_OP_ISSUER ? [OIDC({ id: 'op', name: 'Test OP', issuer: process.env.AUTH_OP_ISSUER })] : []),
  ],
  callbacks: {
    // proxy.ts: /protected needs a session, /security a proof of the last ten minutes (a page is
    // sent to confirm it's you, a fetch gets 401); everything else is public.
    authorized: async ({ request, auth }) => {
      if (request.nextUrl.pathname === '/security') {
        const recent = await requireRecentAuth(request, { maxAge: 600 })
        return recent instanceof Response ? recent : true
      }
      return !request.nextUrl.pathname.startsWith('/protected') || !!auth
    },
    // update({ name }) from the client, unstable_update({ user: { name } }) on the server.
    jwt: ({ token, trigger, session }) => {
      const update = session as { name?: unknown; user?: { name?: unknown } } | undefined
      const name = update?.user?.name ?? update?.name
      if (trigger === 'update' && typeof name === 'string') token.name = name
      return token
    },
  },
})
