import { scryptSync, timingSafeEqual } from 'node:crypto'
import type { AuthConfig } from 'authchart'
import Credentials from 'authchart/providers/credentials'

// Your user store. Here: one user, with a scrypt hash of the password "wonderland".
const users = new Map([
  ['alice', { id: '1', name: 'Alice', email: 'alice@example.com', salt: 'b3kF1v', hash: scryptSync('wonderland', 'b3kF1v', 64) }],
])

function verify(username: unknown, password: unknown) {
  const user = users.get(String(username))
  // Hash even for unknown users, so the answer takes as long either way.
  const hash = scryptSync(String(password), user?.salt ?? 'no-such-user', 64)
  return user && timingSafeEqual(hash, user.hash) ? { id: user.id, name: user.name, email: user.email } : null
}

export const config = {
  secret: process.env.AUTH_SECRET, // at least 32 characters: `npx authchart secret` makes one
  // In production, only the hosts you serve: a forged Host gets 400, never a link or a redirect.
  trustHost: process.env.NODE_ENV === 'production' ? ['app.example.com'] : true,
  providers: [
    Credentials({
      credentials: { username: {}, password: { type: 'password' } },
      authorize: ({ username, password }) => verify(username, password),
    }),
  ],
} satisfies AuthConfig
