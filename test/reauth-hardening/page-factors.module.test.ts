/**
 * Issue 43, item 7, at the modules: which users have a password to prove, how the action being
 * confirmed is named, and the message a re-authentication's code goes out in.
 */
import { describe, expect, it } from 'vitest'
import { hasPassword } from '../../core/flows/reauthenticate/chart.js'
import { actionLabelOf } from '../../core/flows/reauthenticate/policy.js'
import { renderMessage } from '../../core/email/provider.js'
import type { RequestContext } from '../../core/config/types.js'
import type { CurrentSession } from '../../core/session/current.js'

const credentials = { type: 'credentials', id: 'credentials', config: {} }

function ctxWith(adapter: unknown, providers: unknown[] = [credentials]) {
  return { config: { adapter, providers } } as unknown as RequestContext
}
const session = (strategy: 'jwt' | 'database', fva?: Record<string, number>) =>
  (strategy === 'jwt'
    ? { strategy, user: { id: 'u-1', email: null, name: null }, token: { sub: 'u-1', ...(fva ? { fva } : {}) } }
    : { strategy, user: { id: 'u-1', email: null, name: null }, session: { ...(fva ? { fva } : {}) } }) as unknown as CurrentSession
const accounts = (...types: string[]) => async (userId: string) => types.map((type, i) => ({ type, provider: `p${i}`, providerAccountId: String(i), userId }))

describe('hasPassword', () => {
  it('reads a credentials account of the user from the adapter', async () => {
    for (const strategy of ['jwt', 'database'] as const) {
      expect(await hasPassword(ctxWith({ listAccounts: accounts('oidc', 'credentials'), getUser: async () => ({ id: 'u-1' }) }), session(strategy))).toBe(true)
    }
    expect(await hasPassword(ctxWith({ listAccounts: accounts('oidc'), getUser: async () => ({ id: 'u-1' }) }), session('database'))).toBe(false)
    expect(await hasPassword(ctxWith({ listAccounts: accounts(), getUser: async () => ({ id: 'u-1' }) }), session('database', { pwd: 1 }))).toBe(false)
  })

  it('keeps the password where the adapter cannot tell: no listAccounts, or a JWT user it has no record of or who proved one', async () => {
    expect(await hasPassword(ctxWith(undefined), session('jwt'))).toBe(true)
    expect(await hasPassword(ctxWith({}), session('database'))).toBe(true)
    expect(await hasPassword(ctxWith({ listAccounts: accounts(), getUser: async () => null }), session('jwt'))).toBe(true)
    expect(await hasPassword(ctxWith({ listAccounts: accounts(), getUser: async () => ({ id: 'u-1' }) }), session('jwt', { pwd: 1 }))).toBe(true)
    expect(await hasPassword(ctxWith({ listAccounts: accounts('oidc'), getUser: async () => ({ id: 'u-1' }) }), session('jwt', { fed: 1 }))).toBe(false)
  })

  it('is false without a credentials provider', async () => {
    expect(await hasPassword(ctxWith(undefined, []), session('jwt'))).toBe(false)
  })
})

describe('actionLabelOf', () => {
  it('tells the revocations apart by their form, and names every other action by its label', () => {
    expect(actionLabelOf('revoke-sessions', { revoke: 'all' })).toBe('sign out everywhere, this browser too')
    expect(actionLabelOf('revoke-sessions', { revoke: 'others' })).toBe('sign out of every other session')
    expect(actionLabelOf('revoke-sessions', { revoke: 'one', id: 's-1' })).toBe('sign out a session')
    expect(actionLabelOf('revoke-sessions', { revoke: 'toString' })).toBe('sign out your other sessions')
    expect(actionLabelOf('add-passkey')).toBe('add a passkey')
    expect(actionLabelOf('constructor')).toBe('continue')
    expect(actionLabelOf('app')).toBe('continue')
  })
})

describe("a re-authentication code's message", () => {
  const params = {
    identifier: 'alice@example.com',
    url: 'https://authchart.test/auth/step/reauthenticate',
    expires: new Date(),
    token: 'unused-token',
    code: '12345678',
    theme: {},
    request: new Request('https://authchart.test/'),
    provider: { from: 'authchart <no-reply@authchart.test>' },
  } as never
  it('names the action it confirms and carries the code, never a sign-in link', () => {
    const message = renderMessage({ ...(params as object), confirming: 'sign out everywhere, this browser too' } as never)
    expect(message.subject).toBe('Your code to confirm: sign out everywhere, this browser too (authchart.test)')
    expect(message.text).toContain('12345678')
    expect(`${message.text}${message.html}`).not.toMatch(/Sign in|unused-token|href=/)
    expect(message.html).toContain('sign out everywhere, this browser too')
  })
  it('is the sign-in message otherwise', () => {
    expect(renderMessage(params).subject).toBe('Sign in to authchart.test')
  })
})
