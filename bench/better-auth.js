// better-auth (devDependency) as the second peer: the same users and claims through its own API,
// with its built-in memory adapter, in-process (`auth.handler(Request)` → `Response`).
import { betterAuth } from 'better-auth'
import { memoryAdapter } from 'better-auth/adapters/memory'

export const BA_ORIGIN = 'https://bench.test'
const SECRET = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
export const EMAIL = 'alice@x.test'
export const PASSWORD = 'correct horse battery'

/** A password "hash" that costs nothing, so sign-in measures the library rather than scrypt. */
const cheapPassword = {
  hash: async (password) => `plain:${password}`,
  verify: async ({ hash, password }) => hash === `plain:${password}`,
}

/**
 * A better-auth instance with a fresh memory database and one user (Alice). `cache` is the cookie
 * cache strategy (`undefined` for none, else `compact`, `jwt` or `jwe`); `scrypt` keeps its default
 * password hashing.
 */
export async function betterAuthInstance({ cache, scrypt = false } = {}) {
  const db = { user: [], session: [], account: [], verification: [] }
  const auth = betterAuth({
    secret: SECRET,
    baseURL: BA_ORIGIN,
    database: memoryAdapter(db),
    emailAndPassword: { enabled: true, ...(scrypt ? {} : { password: cheapPassword }) },
    session: cache ? { cookieCache: { enabled: true, maxAge: 300, strategy: cache } } : {},
    rateLimit: { enabled: false },
    telemetry: { enabled: false },
    logger: { disabled: true },
  })
  const signUp = await auth.handler(
    new Request(`${BA_ORIGIN}/api/auth/sign-up/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: BA_ORIGIN },
      body: JSON.stringify({ email: EMAIL, password: PASSWORD, name: 'Alice' }),
    }),
  )
  if (signUp.status !== 200) throw new Error(`better-auth sign-up: ${signUp.status} ${await signUp.text()}`)
  return { auth, db }
}

export const BA_SESSION_COOKIE = '__Secure-better-auth.session_token'

/** POST /sign-in/email as Alice; the response (200 with the session cookie). */
export function betterAuthSignIn(auth) {
  return auth.handler(
    new Request(`${BA_ORIGIN}/api/auth/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: BA_ORIGIN },
      body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
    }),
  )
}

/** POST /sign-out with the cookies a sign-in response set. */
export function betterAuthSignOut(auth, signIn) {
  const cookie = signIn.headers.getSetCookie().map((c) => c.slice(0, c.indexOf(';'))).join('; ')
  return auth.handler(new Request(`${BA_ORIGIN}/api/auth/sign-out`, { method: 'POST', headers: { cookie, origin: BA_ORIGIN } }))
}
