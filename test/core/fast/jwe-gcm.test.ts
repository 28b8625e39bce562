/**
 * The synchronous A256GCM JWE (node:crypto) of sealed flows next to jose: what it seals jose opens,
 * what jose sealed it opens to the same plaintext, a tampered token is refused by both, and a
 * header it does not recognise exactly is left to jose.
 */
import * as jose from 'jose'
import { describe, expect, it } from 'vitest'
import { encryptGcm, fastGcm, parseGcm } from '../../../core/fast/jwe-gcm.js'

const key = crypto.getRandomValues(new Uint8Array(32))
const sealedByJose = (header: jose.CompactJWEHeaderParameters, plaintext = 'hello') =>
  new jose.CompactEncrypt(new TextEncoder().encode(plaintext)).setProtectedHeader(header).encrypt(key)

describe('the fast A256GCM JWE next to jose', () => {
  it('runs on this runtime (node:crypto is reachable)', () => {
    expect(fastGcm).toBe(true)
  })

  it('seals a token jose decrypts to the same plaintext, under the same header', async () => {
    const token = encryptGcm('{"v":1}', key, 'kid-1')
    const { plaintext, protectedHeader } = await jose.compactDecrypt(token, key)
    expect(new TextDecoder().decode(plaintext)).toBe('{"v":1}')
    expect(protectedHeader).toEqual({ alg: 'dir', enc: 'A256GCM', kid: 'kid-1' })
  })

  it('opens a token jose sealed, with its key id', async () => {
    const parsed = parseGcm(await sealedByJose({ alg: 'dir', enc: 'A256GCM', kid: 'kid-1' }, 'é and ✓'))
    expect(parsed?.kid).toBe('kid-1')
    expect(parsed?.decrypt(key)).toBe('é and ✓')
  })

  it('refuses what jose refuses: another key, a changed ciphertext or tag', async () => {
    const token = await sealedByJose({ alg: 'dir', enc: 'A256GCM', kid: 'kid-1' })
    const other = crypto.getRandomValues(new Uint8Array(32))
    expect(() => parseGcm(token)!.decrypt(other)).toThrow(TypeError)
    await expect(jose.compactDecrypt(token, other)).rejects.toThrow()
    const parts = token.split('.')
    for (const index of [3, 4]) {
      const changed = parts.map((part, i) => (i === index ? `${part.at(0) === 'A' ? 'B' : 'A'}${part.slice(1)}` : part)).join('.')
      expect(() => parseGcm(changed)!.decrypt(key)).toThrow(TypeError)
      await expect(jose.compactDecrypt(changed, key)).rejects.toThrow()
    }
  })

  it('leaves a header with any other parameter, or another algorithm, to jose', async () => {
    expect(parseGcm(await sealedByJose({ alg: 'dir', enc: 'A256GCM', kid: 'kid-1', cty: 'JWT' }))).toBeUndefined()
    const a128 = await new jose.CompactEncrypt(new TextEncoder().encode('hello'))
      .setProtectedHeader({ alg: 'dir', enc: 'A128GCM' })
      .encrypt(key.subarray(0, 16))
    expect(parseGcm(a128)).toBeUndefined()
    expect(parseGcm('not a token')).toBeUndefined()
  })
})
