/**
 * The codes of the device grant, unit by unit: the device code's randomness, the user code's
 * alphabet and form, how a typed code is compared, and the keyed hash each is stored under; and
 * the options `deviceAuthorization()` refuses.
 */
import { describe, expect, it } from 'vitest'
import { codeKey, isDeviceCodeShape, newDeviceCode, newUserCode, normalizeUserCode, USER_CODE_ALPHABET } from '../../core/device-authorization/codes.js'
import { deviceAuthorization } from '../../core/device-authorization.js'
import { SECRET } from '../fixtures/http.js'

describe('the device code', () => {
  it('is 256 random bits in base64url, never the same twice', () => {
    const codes = Array.from({ length: 200 }, newDeviceCode)
    for (const code of codes) {
      expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(isDeviceCodeShape(code)).toBe(true)
    }
    expect(new Set(codes).size).toBe(codes.length)
    expect(isDeviceCodeShape(`${codes[0]}x`)).toBe(false)
    expect(isDeviceCodeShape(codes[0]!.slice(1))).toBe(false)
    expect(isDeviceCodeShape(`${codes[0]!.slice(1)}=`)).toBe(false)
  })
})

describe('the user code', () => {
  it("is 8 characters of RFC 8628's consonants, shown XXXX-XXXX, each letter drawn evenly", () => {
    expect(USER_CODE_ALPHABET).toBe('BCDFGHJKLMNPQRSTVWXZ')
    const counts = new Map<string, number>()
    for (let drawn = 0; drawn < 2000; drawn++) {
      const code = newUserCode()
      expect(code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/)
      for (const letter of code.replace('-', '')) counts.set(letter, (counts.get(letter) ?? 0) + 1)
    }
    // 16,000 letters over 20: 800 each expected; a modulo bias or a missing letter falls far outside.
    expect(counts.size).toBe(20)
    for (const count of counts.values()) expect(count).toBeGreaterThan(650)
    for (const count of counts.values()) expect(count).toBeLessThan(950)
  })

  it('is compared without case, dashes or spaces, and anything else is no code', () => {
    expect(normalizeUserCode('WDJB-MJHT')).toBe('WDJBMJHT')
    expect(normalizeUserCode('wdjbmjht')).toBe('WDJBMJHT')
    expect(normalizeUserCode(' wdjb mjht ')).toBe('WDJBMJHT')
    expect(normalizeUserCode('WDJB-MJH')).toBeNull()
    expect(normalizeUserCode('WDJB-MJHTB')).toBeNull()
    // Vowels and digits are not in the alphabet.
    expect(normalizeUserCode('WDJB-MJHA')).toBeNull()
    expect(normalizeUserCode('WDJB-MJH1')).toBeNull()
    expect(normalizeUserCode(`WDJBMJHT${'-'.repeat(40)}`)).toBeNull()
  })
})

describe('the keyed hash', () => {
  it('is an HMAC under the secret: the same for the same code, another for another code, kind or secret', async () => {
    const key = await codeKey(SECRET, 'user', 'WDJBMJHT')
    expect(key).toMatch(/^[0-9a-f]{64}$/)
    expect(await codeKey(SECRET, 'user', 'WDJBMJHT')).toBe(key)
    expect(await codeKey(SECRET, 'user', 'WDJBMJHV')).not.toBe(key)
    expect(await codeKey(SECRET, 'device', 'WDJBMJHT')).not.toBe(key)
    expect(await codeKey(`${SECRET}-rotated`, 'user', 'WDJBMJHT')).not.toBe(key)
    expect(key).not.toContain('WDJBMJHT')
  })
})

describe('deviceAuthorization()', () => {
  const clients = [{ clientId: 'cli', name: 'CLI' }]

  it('takes its defaults: 600 s codes, a 5 s interval, sessions, 10 codes per user and 30 per address in 15 minutes', () => {
    const { options } = deviceAuthorization({ clients })
    expect(options).toMatchObject({ expiresIn: 600, interval: 5, issue: 'session', userCodeLimit: { perUser: 10, perAddress: 30, window: 900 } })
    expect(options.clients.get('cli')).toEqual({ clientId: 'cli', name: 'CLI' })
  })

  it.each([
    ['no clients', { clients: [] }],
    ['a client id with a space', { clients: [{ clientId: 'a cli', name: 'CLI' }] }],
    ['a client listed twice', { clients: [...clients, ...clients] }],
    ['a client without a name', { clients: [{ clientId: 'cli', name: ' ' }] }],
    ['codes living 59 s', { clients, expiresIn: 59 }],
    ['codes living 1,801 s', { clients, expiresIn: 1801 }],
    ['an interval of 0', { clients, interval: 0 }],
    ['an interval of 61 s', { clients, interval: 61 }],
    ['an access token', { clients, issue: 'access-token' }],
    ['a limit of 0', { clients, userCodeLimit: { perUser: 0 } }],
  ])('refuses %s', (_name, options) => {
    expect(() => deviceAuthorization(options as never)).toThrow(TypeError)
  })

  it('takes the edges of each range', () => {
    expect(deviceAuthorization({ clients, expiresIn: 60, interval: 1 }).options).toMatchObject({ expiresIn: 60, interval: 1 })
    expect(deviceAuthorization({ clients, expiresIn: 1800, interval: 60 }).options).toMatchObject({ expiresIn: 1800, interval: 60 })
  })
})
