/**
 * The session's DPoP key pair at the unit level: sealed with the secret, it opens only with that
 * secret and unaltered, and the opened pair signs proofs the public key verifies; the private key
 * does not leave the seal in the clear.
 */
import { describe, expect, it } from 'vitest'
import { generateDPoPKeyPair, openDPoPKeyPair, sealDPoPKeyPair } from '../../core/oauth/dpop.js'
import { SECRET } from '../fixtures/http.js'

const data = new TextEncoder().encode('proof')
const ecdsa = { name: 'ECDSA', hash: 'SHA-256' }

describe('a sealed DPoP key pair', () => {
  it('opens with the secret into a pair that signs and verifies', async () => {
    const keyPair = await generateDPoPKeyPair()
    const sealed = await sealDPoPKeyPair(keyPair, [SECRET], 3600)
    expect(sealed).not.toContain((await crypto.subtle.exportKey('jwk', keyPair.privateKey)).d)
    const opened = await openDPoPKeyPair(sealed, [SECRET])
    const signature = await crypto.subtle.sign(ecdsa, opened.privateKey, data)
    expect(await crypto.subtle.verify(ecdsa, keyPair.publicKey, signature, data), 'the same key pair').toBe(true)
    expect(await crypto.subtle.verify(ecdsa, opened.publicKey, signature, data)).toBe(true)
    expect(opened.privateKey.extractable, 'not exportable once opened').toBe(false)
  })

  it('does not open with another secret, or altered', async () => {
    const sealed = await sealDPoPKeyPair(await generateDPoPKeyPair(), [SECRET], 3600)
    await expect(openDPoPKeyPair(sealed, ['another-secret-that-is-long-enough-0123456789'])).rejects.toThrow(/does not open/)
    const altered = `${sealed.slice(0, -4)}${sealed.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`
    await expect(openDPoPKeyPair(altered, [SECRET])).rejects.toThrow(/does not open/)
  })
})
