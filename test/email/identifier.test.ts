/**
 * A sign-in link is the token's address's and no one else's: the attacker asks for a link to their
 * own inbox, writes the victim's address into it and opens it. Refused through the bundled memory
 * adapter and the PostgreSQL adapter (whose `useVerificationToken` finds no row for the other
 * address) and through a custom adapter that ignores the address (where only the engine's own
 * check, the returned row's identifier against the link's, refuses), with the scanner-safe
 * confirmation page and with `link: 'direct'`.
 */
import { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { PostgresAdapter } from '../../adapters/postgres.js'
import type { Adapter, VerificationToken } from '../../core/adapters.js'
import { setCookie } from '../fixtures/http.js'
import { addressBlind, emailConfig, EmailClient, lastLink, ORIGIN } from './helpers.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const VERIFICATION = `${ORIGIN}/auth/error?error=Verification`
const ATTACKER = 'mallory@example.com'
const VICTIM = 'victim@example.com'

let pglite: PGlite
// Started once for the file, under the hook's longer timeout (a loaded machine takes seconds).
beforeAll(async () => {
  pglite = new PGlite()
  await pglite.waitReady
})
afterAll(async () => {
  await pglite?.close()
})


/** Whether the adapter itself refuses the other address (and keeps the row for its owner). */
const ADAPTERS: [string, () => Promise<Adapter>, boolean][] = [
  ['the memory adapter', async () => MemoryAdapter(createMemoryStore()), true],
  [
    'the PostgreSQL adapter (PGlite)',
    async () => {
      const adapter = PostgresAdapter(pglite, { tablePrefix: `links_${Math.random().toString(36).slice(2, 8)}` })
      await adapter.migrate()
      return adapter
    },
    true,
  ],
  ['a custom adapter that ignores the address', async () => addressBlind(MemoryAdapter(createMemoryStore())), false],
]

describe.each(ADAPTERS)('a link rewritten to another address, through %s', (_name, makeAdapter, adapterRefuses) => {
  it.each([
    ['on the confirmation page', 'confirm'],
    ['opened directly', 'direct'],
  ] as const)('is refused %s: no session, no user for the victim', async (_how, link) => {
    const adapter = await makeAdapter()
    const { config, outbox } = emailConfig({ provider: { link }, overrides: { adapter } })
    const attacker = new EmailClient(config)
    await attacker.requestLink(ATTACKER)
    const own = lastLink(outbox)
    const forged = new URL(own)
    forged.searchParams.set('email', VICTIM)
    const response = link === 'direct' ? await attacker.open(forged) : await attacker.confirm(forged)
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe(VERIFICATION)
    expect(setCookie(response, SESSION_COOKIE)).toBeUndefined()
    expect(await attacker.session()).toMatchObject({ body: null })
    expect(await adapter.getUserByEmail!(VICTIM)).toBeNull()
    expect(config.logger.error).toHaveBeenCalledWith(expect.objectContaining({ type: 'Verification' }))

    // Where the adapter refused, the token is still its owner's to use; a blind adapter spent it.
    const owner = new EmailClient(config)
    const ownersTry = link === 'direct' ? await owner.open(own) : await owner.confirm(own)
    if (adapterRefuses) {
      expect(setCookie(ownersTry, SESSION_COOKIE)).toBeDefined()
      expect(await owner.session()).toMatchObject({ body: { user: { email: ATTACKER } } })
    } else {
      expect(ownersTry.headers.get('location')).toBe(VERIFICATION)
    }
  })
})

describe('an e-mail field that is not text', () => {
  it.each([
    ['an object', { address: VICTIM }],
    ['a list', [VICTIM]],
    ['missing', undefined],
  ])('is refused as %s, with a log line that says so (not "null"), and sends nothing', async (_kind, email) => {
    const { config, outbox } = emailConfig()
    const client = new EmailClient(config)
    const csrfToken = await client.csrfToken()
    const response = await client.send({ path: '/signin/email', json: { csrfToken, ...(email === undefined ? {} : { email }) } })
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).toBe(`${ORIGIN}/auth/signin?error=EmailSignin`)
    expect(outbox).toEqual([])
    const logged = (config.logger.error as unknown as { mock: { calls: unknown[][] } }).mock.calls.map(([error]) => String((error as Error).message))
    expect(logged).toContain('Refused the request: its "email" field is missing or not text')
    expect(logged.join('\n')).not.toContain('"null"')
  })
})
