/**
 * The app issue 48's re-authentication tests attack: JWT sessions, an adapter that stores Alice
 * and Mallory, a `jwt` callback that merges what the client sends through `update()`, and an
 * e-mail provider whose messages are recorded instead of sent.
 *
 * @module
 */
import { vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import Email from '../../providers/email.js'
import { decode } from '../../core/jwt.js'
import { ALICE, Client, credentialsProvider, ORIGIN, SECRET, featureConfig } from '../fixtures/http.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
export const HTML = { accept: 'text/html' }
export const STEP_PAGE = `${ORIGIN}/auth/step/reauthenticate`
export const MALLORY = { id: 'u-3', name: 'Mallory', email: 'mallory@evil.example' }

/** What the e-mail provider was asked to send: to whom, with which code. */
export interface SentCode {
  to: string
  code: string
}

/** Alice / wonderland and Mallory / mallory-pw. */
export const users = credentialsProvider((c) =>
  c.username === 'alice' && c.password === 'wonderland'
    ? { ...ALICE }
    : c.username === 'mallory' && c.password === 'mallory-pw'
      ? { ...MALLORY }
      : null,
)

/** Merges whatever the client sends through `update()` into the token (the docs' profile edit). */
export const mergingJwt: NonNullable<AuthConfig['callbacks']>['jwt'] = ({ token, trigger, session }) =>
  trigger === 'update' && session && typeof session === 'object' ? { ...token, ...(session as object) } : token

/** A JWT app whose adapter stores Alice and Mallory, with e-mailed codes counted in `sent`. */
export function mergingApp(overrides: Partial<AuthConfig> = {}) {
  const store = createMemoryStore()
  store.users.set(ALICE.id, { ...ALICE, emailVerified: null })
  store.users.set(MALLORY.id, { ...MALLORY, emailVerified: null })
  const sent: SentCode[] = []
  const config = featureConfig({
    adapter: MemoryAdapter(store),
    session: { strategy: 'jwt' },
    store: memoryAuthStore(),
    callbacks: { jwt: mergingJwt },
    providers: [
      users,
      Email({
        sendVerificationRequest: async ({ identifier, code }) => {
          sent.push({ to: identifier, code: String(code) })
        },
      }),
    ],
    ...overrides,
  })
  return { store, config, sent }
}

export async function post(client: Client, path: string, body: Record<string, string>) {
  return client.send({ path, body: { ...body, csrfToken: await client.csrfToken() }, headers: HTML })
}

/** `update(data)` from the browser: the jwt callback gets `trigger: 'update'` and `data`. */
export async function update(client: Client, data: unknown) {
  return client.send({ path: '/session', json: { csrfToken: await client.csrfToken(), data } })
}

export const later = (minutes: number) => vi.setSystemTime(Date.now() + minutes * 60_000)

/** Whether the session in `client`'s jar may turn on two-step verification now (fresh enough). */
export async function isFresh(client: Client): Promise<boolean> {
  const asked = await post(client, '/two-factor', {})
  return asked.headers.get('location') !== STEP_PAGE
}

export const tokenOf = async (client: Client) =>
  decode({ token: client.jar.get(SESSION_COOKIE) ?? '', secret: SECRET, salt: SESSION_COOKIE }).catch(() => null)


/** Targets a browser would follow off the site if written as they are into a `Location`. */
export const OFF_SITE_TARGETS = [
  '//evil.example/phish',
  `${ORIGIN}//evil.example/phish`,
  '/\\evil.example/phish',
  '/%5Cevil.example/phish',
  '/%5C%5Cevil.example/phish',
  '/\t/evil.example/phish',
  '/\n/evil.example/phish',
  '\t//evil.example/phish',
  `${ORIGIN}/\\evil.example/phish`,
]

/** Whether a browser following `location` (from a page of ORIGIN) stays on ORIGIN. */
export function staysOnSite(location: string | null): boolean {
  if (location === null) return false
  if (/^[\s\u0000-\u001f]*[/\\][/\\]/.test(location.replace(/[\t\n\r]/g, ''))) return false
  return new URL(location, `${ORIGIN}/auth/step/reauthenticate`).origin === ORIGIN
}

