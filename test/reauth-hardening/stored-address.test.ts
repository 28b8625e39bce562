/**
 * Issue 48, item 1, at the module: the address a re-authentication's code goes to is read from the
 * adapter's user record for the session's user id, and from nowhere else.
 */
import { describe, expect, it, vi } from 'vitest'
import { storedAddressOf } from '../../core/flows/reauthenticate/chart.js'
import type { RequestContext } from '../../core/config/types.js'

const ctxWith = (adapter: unknown) => ({ config: { adapter } }) as unknown as RequestContext

describe('storedAddressOf', () => {
  it("reads the address of the user's own record, by id", async () => {
    const getUser = vi.fn(async (id: string) => (id === 'u-1' ? { id, email: 'alice@example.com' } : { id, email: 'mallory@evil.example' }))
    expect(await storedAddressOf(ctxWith({ getUser }), 'u-1')).toBe('alice@example.com')
    expect(getUser).toHaveBeenCalledWith('u-1')
  })

  it('has no address without an adapter, without getUser, for an unknown user or a record without one', async () => {
    expect(await storedAddressOf(ctxWith(undefined), 'u-1')).toBeNull()
    expect(await storedAddressOf(ctxWith({}), 'u-1')).toBeNull()
    expect(await storedAddressOf(ctxWith({ getUser: async () => null }), 'u-1')).toBeNull()
    expect(await storedAddressOf(ctxWith({ getUser: async () => ({ id: 'u-1', email: '' }) }), 'u-1')).toBeNull()
    expect(await storedAddressOf(ctxWith({ getUser: async () => ({ id: 'u-1', email: null }) }), 'u-1')).toBeNull()
  })
})
