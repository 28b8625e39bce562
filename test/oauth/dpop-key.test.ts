/**
 * The session's DPoP key pair at the unit level: sealed with the secret, it opens only with that
 * secret and unaltered, and the opened pair signs proofs the public key verifies; the private key
 * does not leave the seal in the clear.
 */
import * as oauth from 'oauth4webapi'
import { describe, expect, it } from 'vitest'
import { generateDPoPKeyPair, openDPoPKeyPair, sealDPoPKeyPair, withDPoPNonceRetry } from '../../core/oauth/dpop.js'
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

/** The refusal oauth4webapi raises when the server asks for a DPoP nonce (`use_dpop_nonce`). */
const nonceChallenge = () =>
  new oauth.ResponseBodyError('use_dpop_nonce', {
    cause: { error: 'use_dpop_nonce', error_description: 'Authorization server requires nonce in DPoP proof' },
    response: new Response(null, { status: 400, headers: { 'dpop-nonce': 'n-1' } }),
  })

/** A server's endpoint that counts its requests, and refuses a caller that keeps on sending. */
function endpoint() {
  let requests = 0
  return {
    get requests() {
      return requests
    },
    send: async () => {
      if (++requests > 5) throw new Error('the client keeps sending: a retry loop')
      return new Response('{}', { status: 200 })
    },
  }
}

describe('withDPoPNonceRetry', () => {
  const handle = async () => oauth.DPoP({}, await generateDPoPKeyPair())

  it('sends once more when the server asks for a nonce, and answers with the retry', async () => {
    const server = endpoint()
    let asked = false
    const answer = await withDPoPNonceRetry(await handle(), server.send, async () => {
      if (!asked) {
        asked = true
        throw nonceChallenge()
      }
      return 'tokens'
    })
    expect(answer).toBe('tokens')
    expect(server.requests).toBe(2)
  })

  it('retries once, never in a loop: a server that asks for a nonce every time gets two requests and its refusal', async () => {
    const server = endpoint()
    const answer = withDPoPNonceRetry(await handle(), server.send, async () => {
      throw nonceChallenge()
    })
    await expect(answer).rejects.toBeInstanceOf(oauth.ResponseBodyError)
    expect(server.requests).toBe(2)
  })

  it('does not retry another error, or a nonce challenge without a DPoP handle', async () => {
    const other = endpoint()
    await expect(withDPoPNonceRetry(await handle(), other.send, async () => Promise.reject(new TypeError('bad answer')))).rejects.toThrow('bad answer')
    expect(other.requests).toBe(1)
    const bare = endpoint()
    await expect(withDPoPNonceRetry(undefined, bare.send, async () => Promise.reject(nonceChallenge()))).rejects.toBeInstanceOf(oauth.ResponseBodyError)
    expect(bare.requests).toBe(1)
  })
})
