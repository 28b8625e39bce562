import { describe, expect, it } from 'vitest'
import { createKeySecret, hashesEqual, hashKeySecret, keySecretMatches, parseApiKey } from '../../core/api-keys/secret.js'

const SECRET = 'a-config-secret-of-enough-length-0123456789'

describe('API key secrets (attacks)', () => {
  it('shows a prefixed key with at least 128 random bits that parses back to its id', () => {
    const { id, key } = createKeySecret('ak')
    expect(key.startsWith(`ak_${id}_`)).toBe(true)
    const parsed = parseApiKey(key, 'ak')!
    expect(parsed.id).toBe(id)
    // 22 base64url characters carry 132 bits.
    expect(parsed.secret.length).toBeGreaterThanOrEqual(22)
    expect(createKeySecret('ak').key).not.toBe(key)
  })

  it('stores a keyed hash, never the secret, and matches only the right secret', async () => {
    const { id, key } = createKeySecret('ak')
    const { secret } = parseApiKey(key, 'ak')!
    const stored = await hashKeySecret(SECRET, id, secret)
    expect(stored).not.toContain(secret)
    expect(await keySecretMatches([SECRET], id, secret, stored)).toBe(true)
    // Another config secret gives another hash: the hash is keyed.
    expect(await hashKeySecret('another-config-secret-of-enough-length-01', id, secret)).not.toBe(stored)
  })

  it('refuses a secret one byte off', async () => {
    const { id, key } = createKeySecret('ak')
    const { secret } = parseApiKey(key, 'ak')!
    const stored = await hashKeySecret(SECRET, id, secret)
    const last = secret.at(-1) === 'A' ? 'B' : 'A'
    expect(await keySecretMatches([SECRET], id, `${secret.slice(0, -1)}${last}`, stored)).toBe(false)
  })

  it("refuses another user's key id with a guessed secret, and a hash moved to another id", async () => {
    const victim = createKeySecret('ak')
    const attacker = createKeySecret('ak')
    const victimStored = await hashKeySecret(SECRET, victim.id, parseApiKey(victim.key, 'ak')!.secret)
    const attackerSecret = parseApiKey(attacker.key, 'ak')!.secret
    expect(await keySecretMatches([SECRET], victim.id, attackerSecret, victimStored)).toBe(false)
    const attackerStored = await hashKeySecret(SECRET, attacker.id, attackerSecret)
    expect(await keySecretMatches([SECRET], victim.id, attackerSecret, attackerStored)).toBe(false)
  })

  it('keeps keys working across a config secret rotation', async () => {
    const { id, key } = createKeySecret('ak')
    const { secret } = parseApiKey(key, 'ak')!
    const stored = await hashKeySecret(SECRET, id, secret)
    expect(await keySecretMatches(['a-new-config-secret-of-enough-length-0123', SECRET], id, secret, stored)).toBe(true)
  })

  it('parses no malformed key: other prefix, no id, short secret', () => {
    const { key } = createKeySecret('ak')
    expect(parseApiKey(key, 'sk')).toBeUndefined()
    expect(parseApiKey('ak__abcdefghijklmnopqrstuvwxyz', 'ak')).toBeUndefined()
    expect(parseApiKey('ak_id_short', 'ak')).toBeUndefined()
    expect(parseApiKey('ak_id_abc+defghijklmnopqrstuvwxyz', 'ak')).toBeUndefined()
    expect(() => createKeySecret('Bad_Prefix')).toThrow(TypeError)
  })

  it('compares hashes over their whole length', () => {
    expect(hashesEqual('abcd', 'abcd')).toBe(true)
    expect(hashesEqual('abcd', 'abce')).toBe(false)
    expect(hashesEqual('abcd', 'abc')).toBe(false)
    expect(hashesEqual('', 'a')).toBe(false)
  })
})
