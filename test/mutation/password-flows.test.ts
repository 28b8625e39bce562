/**
 * The password flows' single-use tokens at the module: every token of a user and purpose ended by
 * a revocation, and no other.
 */
import { describe, expect, it } from 'vitest'
import { issueToken, peekToken, revokeTokens, spendToken } from '../../core/flows/password/tokens.js'
import { memoryAuthStore } from '../../core/store/index.js'

const SECRET = 'a-secret-for-the-password-tokens-0123456789'

describe('password tokens', () => {
  it('ends every token of the user and purpose when revoked, and no other', async () => {
    const tokens = { store: memoryAuthStore(), secret: SECRET }
    const reset = await issueToken(tokens, 'password-reset', 'u-1', 600)
    const verify = await issueToken(tokens, 'password-verify', 'u-1', 600)
    const other = await issueToken(tokens, 'password-reset', 'u-2', 600)
    await revokeTokens(tokens, 'password-reset', 'u-1')
    expect(await peekToken(tokens, 'password-reset', reset)).toBeNull()
    expect(await spendToken(tokens, 'password-reset', reset, 600)).toBeNull()
    expect(await peekToken(tokens, 'password-verify', verify)).toBe('u-1')
    expect(await peekToken(tokens, 'password-reset', other)).toBe('u-2')
  })
})
