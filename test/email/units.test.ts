/**
 * The e-mail building blocks on their own (the second test of each check, beside the ones through
 * `Auth`): the address normaliser against Auth.js's own, the token hash, the codes' alphabet,
 * entropy and binding, and the redaction of send errors.
 */
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { defaultNormalizer as authjsNormalizer } from '../../node_modules/@auth/core/lib/actions/signin/send-token.js'
import { defaultNormalizer, escapeForLog, isDeliverableAddress, mailboxOf } from '../../core/email/normalize.js'
import { resolveEmailProvider, sendError } from '../../core/email/provider.js'
import {
  canonicalCode,
  codeEntropyBits,
  generateCode,
  hashCode,
  hashToken,
  tokenHashCandidates,
} from '../../core/email/secrets.js'

const outcome = (normalize: (value: string) => string, value: string) => {
  try {
    return { address: normalize(value) }
  } catch (error) {
    return { error: (error as Error).message }
  }
}

describe('the default normaliser', () => {
  const inputs = [
    'Alice@Example.COM',
    ' alice@example.com ',
    'alice@example.com,evil.com',
    'alice@,example.com',
    'ａｌｉｃｅ@example.com',
    'alice＠example.com',
    'a@b@c.com',
    'victim@example.com＠attacker.com',
    '"quoted"@example.com',
    '',
    'no-at-sign',
    '@example.com',
    'alice@',
    'ﬁ@example.com',
    'Ⅸ@example.com',
  ]
  it.each(inputs)('treats %j exactly as Auth.js does', (value) => {
    expect(outcome(defaultNormalizer, value)).toEqual(outcome(authjsNormalizer, value))
  })

  it('refuses non-strings, which Auth.js would crash on', () => {
    expect(() => defaultNormalizer(42)).toThrow('Invalid email address format.')
    expect(() => defaultNormalizer(undefined)).toThrow('Missing email from request body.')
  })

  it('lets through no control character, space, angle bracket or overlong address', () => {
    expect(isDeliverableAddress('alice@example.com')).toBe(true)
    for (const bad of ['a\r\nb@c.d', 'a\u0000@b.c', 'a b@c.d', '<a@b.c>', 'a\u2028@b.c', `${'a'.repeat(245)}@example.com`]) {
      expect(isDeliverableAddress(bad), JSON.stringify(bad)).toBe(false)
    }
  })

  it('escapes control characters for the log and cuts long values', () => {
    expect(escapeForLog('a\r\nb')).toBe('a\\r\\nb')
    expect(escapeForLog('x'.repeat(300))).toHaveLength(201)
  })
})

describe('the mailbox a send is counted against', () => {
  it.each([
    ['alice@example.com', 'alice@example.com'],
    ['Alice+News@Example.COM', 'alice@example.com'],
    ['alice+a+b@example.com', 'alice@example.com'],
    ['a.lice@example.com', 'a.lice@example.com'],
    ['a.l.i.c.e+x@gmail.com', 'alice@gmail.com'],
    ['A.Lice@GoogleMail.com', 'alice@gmail.com'],
    ['alice@gmail.com.', 'alice@gmail.com'],
    ['alice@example.com..', 'alice@example.com'],
    ['+tag@example.com', '@example.com'],
    ['alice@bücher.de', 'alice@xn--bcher-kva.de'],
    ['alice+x@XN--BCHER-KVA.DE.', 'alice@xn--bcher-kva.de'],
    ['alice@[192.0.2.1]', 'alice@[192.0.2.1]'],
    ['no-at-sign', 'no-at-sign'],
  ])('%s → %s', (address, mailbox) => {
    expect(mailboxOf(address)).toBe(mailbox)
  })

  it('leaves an address that is no Gmail domain with its dots, even one that ends like one', () => {
    expect(mailboxOf('a.b@notgmail.com')).toBe('a.b@notgmail.com')
    expect(mailboxOf('a.b@gmail.com.evil.example')).toBe('a.b@gmail.com.evil.example')
  })
})

describe('token and code secrets', () => {
  it("hashes a token as Auth.js stores it: sha256(token + secret) in hex", async () => {
    expect(await hashToken('tok', 'sec')).toBe(createHash('sha256').update('toksec').digest('hex'))
  })

  it("tries each rotated secret, then Auth.js's comma-joined array secret", async () => {
    expect(await tokenHashCandidates('t', ['a', 'b'])).toEqual([
      await hashToken('t', 'a'),
      await hashToken('t', 'b'),
      await hashToken('t', 'a,b'),
    ])
    expect(await tokenHashCandidates('t', ['a'])).toEqual([await hashToken('t', 'a')])
  })

  it('draws codes from the alphabet only, every character about equally often', () => {
    const counts = new Map<string, number>()
    for (let i = 0; i < 2000; i++) {
      const code = generateCode(8, 'base32')
      expect(code).toMatch(/^[0-9ABCDEFGHJKMNPQRSTVWXYZ]{8}$/)
      for (const c of code) counts.set(c, (counts.get(c) ?? 0) + 1)
    }
    expect(counts.size).toBe(32)
    // 16,000 draws over 32 characters: 500 expected each; a biased draw is far outside this band.
    for (const count of counts.values()) expect(count).toBeGreaterThan(380)
    for (const count of counts.values()) expect(count).toBeLessThan(620)
    expect(generateCode(7, 'digits')).toMatch(/^\d{7}$/)
  })

  it('carries at least 20 bits in every allowed code, and refuses shorter digit codes', () => {
    expect(codeEntropyBits(6, 'base32')).toBe(30)
    expect(codeEntropyBits(6, 'digits')).toBeLessThan(20)
    expect(codeEntropyBits(7, 'digits')).toBeGreaterThan(20)
    expect(() => resolveEmailProvider({ sendVerificationRequest: () => {}, code: { alphabet: 'digits' } }, 0)).toThrow(
      /fewer than 20 bits/,
    )
    expect(resolveEmailProvider({ sendVerificationRequest: () => {}, code: true }, 0)).toMatchObject({
      maxAge: 600,
      code: { length: 6, alphabet: 'base32', attempts: 5 },
    })
  })

  it('binds a code hash to its token, forgiving case, separators and look-alikes only', async () => {
    expect(canonicalCode(' k7q-2xo ')).toBe('K7Q2X0')
    expect(canonicalCode('il')).toBe('11')
    expect(await hashCode('k7q 2x0', 'token-a')).toBe(await hashCode('K7Q2X0', 'token-a'))
    expect(await hashCode('K7Q2X0', 'token-a')).not.toBe(await hashCode('K7Q2X0', 'token-b'))
    expect(await hashCode('K7Q2X1', 'token-a')).not.toBe(await hashCode('K7Q2X0', 'token-a'))
  })
})

describe('send errors', () => {
  it('redact the link, token and code before cutting to length, so no part of a token survives', () => {
    const token = 'f'.repeat(64)
    const url = `https://app.test/auth/callback/email?token=${token}`
    const detail = `${'x'.repeat(470)}${token} and ${url} and CODE42`
    const error = sendError('API', detail, { token, url, code: 'CODE42' })
    expect(error.message).not.toMatch(/f{8}/)
    expect(error.message).not.toContain('CODE42')
    expect(error.message.startsWith('API error: ')).toBe(true)
  })
})
