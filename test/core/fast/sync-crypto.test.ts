/** The synchronous digests next to the libraries they stand in for. */
import { describe, expect, it } from 'vitest'

describe('the synchronous PKCE challenge', () => {
  it('equals oauth4webapi S256 challenge for the same verifier (RFC 7636 §4.2)', async () => {
    const oauth = await import('oauth4webapi')
    const { pkceChallenge } = await import('../../../core/fast/sync-crypto.js')
    for (let i = 0; i < 20; i++) {
      const verifier = oauth.generateRandomCodeVerifier()
      expect(pkceChallenge(verifier)).toBe(await oauth.calculatePKCECodeChallenge(verifier))
    }
    // RFC 7636 appendix B's example.
    expect(pkceChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')
  })
})
