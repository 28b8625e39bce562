/**
 * The password flows' single-use tokens at the module: every token of a user and purpose ended by
 * a revocation, and no other; and the sign-in's attempt limit for what is typed as an address but
 * is none, spelled any way, with the refusal logged.
 */
import { describe, expect, it } from 'vitest'
import { Client } from '../fixtures/http.js'
import { addUser, passwordWorld, signInWithPassword } from '../password-flow/fixtures.js'
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

describe('the password sign-in’s attempt limit', () => {
  it('counts an identifier that is no address as one, whatever its case and surrounding spaces, and logs the refusal', async () => {
    const world = passwordWorld({}, { rateLimit: { credentials: { perIdentifier: 2 } } })
    await addUser(world, 'alice@example.com', 'correct horse battery')
    for (const typed of ['Not An Address', ' not an address ']) await signInWithPassword(new Client(world.config), typed, 'a guess at it')
    const limited = await signInWithPassword(new Client(world.config), 'NOT AN ADDRESS  ', 'a guess at it')
    expect(limited.headers.get('location')).toMatch(/error=CredentialsSignin&code=rate_limited&retryAfter=\d+/)
    expect(world.config.logger.warn).toHaveBeenCalledWith('credentials-rate-limited')
    const other = await signInWithPassword(new Client(world.config), 'alice@example.com', 'correct horse battery')
    expect(other.headers.get('location')).not.toMatch(/rate_limited/)
  })
})
