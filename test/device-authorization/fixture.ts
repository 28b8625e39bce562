/**
 * The device authorization grant's world, through `Auth`: two users (Alice and Bob) signed in
 * with their own cookie jars, two clients (`acme-cli`, `acme-tv`), and a device that is a script
 * posting forms. Each test builds its own world (fresh adapter and store); `second` is another
 * instance of the application over the same adapter and store.
 */
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { deviceAuthorization, DEVICE_CODE_GRANT } from '../../core/device-authorization.js'
import type { DeviceAuthorizationOptions } from '../../core/device-authorization.js'
import { Auth } from '../../core/index.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthStore } from '../../core/store/types.js'
import type { AuthConfig } from '../../core/types.js'
import { authRequest, Client, credentialsProvider, ORIGIN, spyLogger, testConfig } from '../fixtures/http.js'

/** The users, as the credentials provider answers them. */
export const USERS = {
  alice: { id: 'u-alice', name: 'Alice', email: 'alice@example.test' },
  bob: { id: 'u-bob', name: 'Bob', email: 'bob@example.test' },
} as const

export const CLIENTS = [
  { clientId: 'acme-cli', name: 'Acme CLI' },
  { clientId: 'acme-tv', name: 'Acme TV' },
] as const

/** What a device is told at `device_authorization`. */
export interface Issued {
  device_code: string
  user_code: string
  verification_uri: string
  verification_uri_complete: string
  expires_in: number
  interval: number
}

export interface DeviceWorldOptions {
  strategy?: 'jwt' | 'database'
  device?: Partial<DeviceAuthorizationOptions>
  config?: Partial<AuthConfig>
  /** Wraps the shared store (to break it). */
  store?: (store: AuthStore) => AuthStore
}

/** A world: the config, a second instance over the same adapter and store, and Alice and Bob signed in. */
export async function deviceWorld(options: DeviceWorldOptions = {}) {
  const strategy = options.strategy ?? 'jwt'
  const adapter = MemoryAdapter(createMemoryStore())
  for (const user of Object.values(USERS)) await adapter.createUser({ ...user, emailVerified: null })
  const shared = memoryAuthStore()
  const store = options.store ? options.store(shared) : shared
  const config = testConfig({
    adapter,
    store,
    session: { strategy },
    providers: [credentialsProvider((c) => (c.password === 'pw' && (c.username === 'alice' || c.username === 'bob') ? { ...USERS[c.username] } : null))],
    deviceAuthorization: deviceAuthorization({ clients: [...CLIENTS], ...options.device }),
    ...options.config,
  })
  const second = { ...config, logger: spyLogger() } as AuthConfig
  const signedIn = async (username: 'alice' | 'bob', on: AuthConfig = config) => {
    const client = new Client(on)
    if (strategy === 'database') {
      // Credentials sign in with JWTs only (as in Auth.js): a database session is a stored row.
      const sessionToken = `session-${username}-${crypto.randomUUID()}`
      await adapter.createSession({ sessionToken, userId: USERS[username].id, expires: new Date(Date.now() + 86_400_000), createdAt: new Date() } as never)
      client.jar.cookies.set('__Secure-authjs.session-token', sessionToken)
      return client
    }
    const response = await client.signIn({ username, password: 'pw' })
    if (response.status !== 302) throw new Error(`sign-in of ${username} answered ${response.status}`)
    return client
  }
  return { adapter, store: shared, config, second, signedIn, alice: await signedIn('alice'), bob: await signedIn('bob') }
}

/** A device's form post to `path` under `/auth`, on `config`. */
export async function devicePost(config: AuthConfig, path: string, body: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await Auth(authRequest({ path: `/auth${path}`, body, headers: { 'user-agent': 'AcmeCLI/2.1 (linux)', ...headers } }), config as Omit<AuthConfig, 'raw'>)
  return { status: response.status, headers: response.headers, body: (await response.json().catch(() => null)) as Record<string, unknown> | null }
}

/** The device asks for codes. */
export async function requestCodes(config: AuthConfig, clientId = 'acme-cli', scope?: string) {
  const answered = await devicePost(config, '/device_authorization', { client_id: clientId, ...(scope !== undefined ? { scope } : {}) })
  return { ...answered, issued: answered.body as unknown as Issued }
}

/** The device polls once. */
export function poll(config: AuthConfig, deviceCode: string, clientId = 'acme-cli') {
  return devicePost(config, '/oauth/token', { grant_type: DEVICE_CODE_GRANT, device_code: deviceCode, client_id: clientId })
}

/** The user's page for `userCode`, as `client` sees it. */
export async function openPage(client: Client, userCode?: string) {
  const response = await client.send({ path: '/device', ...(userCode !== undefined ? { query: { user_code: userCode } } : {}) })
  return { response, html: await response.text() }
}

/** The CSRF token a page hands out (its hidden field). */
export const csrfOf = (html: string) => /name="csrfToken" value="([^"]+)"/.exec(html)?.[1]

/** `client` answers `userCode` with `action`, the CSRF token taken from the page unless given. */
export async function answer(client: Client, action: 'approve' | 'deny', userCode: string, csrf?: string | false) {
  const csrfToken = csrf === false ? undefined : (csrf ?? (await client.csrfToken()))
  const response = await client.send({
    method: 'POST',
    path: '/device',
    query: { user_code: userCode },
    body: { action, user_code: userCode, ...(csrfToken !== undefined ? { csrfToken } : {}) },
    // As the page's form posts it: a browser navigation.
    headers: { accept: 'text/html', 'sec-fetch-mode': 'navigate' },
  })
  return { response, html: await response.text() }
}

/** The device request approved by `client`: its codes. */
export async function approvedBy(client: Client, config: AuthConfig): Promise<Issued> {
  const { issued } = await requestCodes(config)
  const answered = await answer(client, 'approve', issued.user_code)
  if (answered.response.status !== 200) throw new Error(`approval answered ${answered.response.status}`)
  return issued
}

export { ORIGIN }
