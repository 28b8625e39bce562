/**
 * What the password-flow tests share: a hasher with a real cost (scrypt, small parameters), a
 * configuration with the `Password` provider over the memory adapter, a mailbox that captures what
 * the flows send, and a client that signs up, signs in and resets.
 *
 * @module
 */
import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto'
import { promisify } from 'node:util'
import { vi } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import type { AdapterUser } from '../../core/adapters.js'
import { memoryAuthStore } from '../../core/store/index.js'
import type { AuthConfig } from '../../core/types.js'
import Password, { type PasswordHasher, type PasswordMail, type PasswordOptions } from '../../providers/password.js'
import { Client, featureConfig } from '../fixtures/http.js'

const scrypt = promisify(scryptCallback) as (password: string, salt: Buffer, length: number, options: object) => Promise<Buffer>

/** The cost the test hasher works at, and the outdated one it flags for a re-hash. */
const COST = { N: 2 ** 12, r: 8, p: 1 }
const OLD_COST = { N: 2 ** 10, r: 8, p: 1 }

/** A scrypt hasher in the PHC-like form `$scrypt$N=…$salt$hash`: real work, so timing can be measured. */
export function testHasher(): PasswordHasher & { calls: { verify: number; dummy: number; hash: number } } {
  const calls = { verify: 0, dummy: 0, hash: 0 }
  const derive = (password: string, salt: Buffer, N: number) => scrypt(password, salt, 32, { ...COST, N })
  const hashWith = async (password: string, N: number) => {
    const salt = randomBytes(16)
    return `$scrypt$N=${N}$${salt.toString('base64')}$${(await derive(password, salt, N)).toString('base64')}`
  }
  const dummySalt = randomBytes(16)
  return {
    calls,
    async hash(password) {
      calls.hash++
      return hashWith(password, COST.N)
    },
    async verify(hash, password) {
      calls.verify++
      const [, , cost, salt, expected] = hash.split('$')
      const N = Number(cost!.slice(2))
      const derived = await derive(password, Buffer.from(salt!, 'base64'), N)
      const valid = timingSafeEqual(derived, Buffer.from(expected!, 'base64'))
      return { valid, needsRehash: valid && N !== COST.N }
    },
    async dummyVerify(password) {
      calls.dummy++
      await derive(password, dummySalt, COST.N)
    },
  }
}

/** A hash at the outdated cost, as an older deployment stored it. */
export async function outdatedHash(password: string): Promise<string> {
  const salt = randomBytes(16)
  const derived = await scrypt(password, salt, 32, OLD_COST)
  return `$scrypt$N=${OLD_COST.N}$${salt.toString('base64')}$${derived.toString('base64')}`
}

/** What the flows sent, newest last. */
export type Mailbox = PasswordMail[]

/** A world: the adapter's store, the mailbox, the hasher and the configuration. */
export interface PasswordWorld {
  store: MemoryStore
  mailbox: Mailbox
  hasher: ReturnType<typeof testHasher>
  config: ReturnType<typeof featureConfig>
}

/** A configuration with the `Password` provider beside the credentials one, over a memory adapter. */
export function passwordWorld(options: PasswordOptions = {}, overrides: Partial<AuthConfig> = {}): PasswordWorld {
  const store = createMemoryStore()
  const mailbox: Mailbox = []
  const hasher = testHasher()
  const config = featureConfig({
    adapter: MemoryAdapter(store),
    store: memoryAuthStore(),
    providers: [
      Password({
        hasher,
        send: vi.fn(async (mail: PasswordMail) => {
          mailbox.push(mail)
        }),
        ...options,
      }),
    ],
    ...overrides,
  })
  return { store, mailbox, hasher, config }
}

/** Stores a user with `password` (hashed by the world's hasher), verified unless told otherwise. */
export async function addUser(
  world: PasswordWorld,
  email: string,
  password: string | null,
  { verified = true }: { verified?: boolean } = {},
): Promise<AdapterUser> {
  const adapter = world.config.adapter!
  const user = await adapter.createUser!({
    id: crypto.randomUUID(),
    email,
    name: null,
    image: null,
    emailVerified: verified ? new Date() : null,
  } as AdapterUser)
  if (password !== null) await adapter.setUserPassword!(user.id, await world.hasher.hash(password))
  return user
}

/** Posts to the password provider's callback with a CSRF token. */
export async function postPassword(client: Client, body: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return client.send({ path: '/callback/password', body: { ...body, csrfToken: await client.csrfToken() }, headers })
}

/** Signs in with the password provider. */
export function signInWithPassword(client: Client, email: string, password: string): Promise<Response> {
  return postPassword(client, { email, password, callbackUrl: '/dashboard' })
}
