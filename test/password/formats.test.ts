import { readFileSync } from 'node:fs'
import { hashPassword as betterAuthHashPassword } from 'better-auth/crypto'
import { describe, expect, it } from 'vitest'
import { findFormat, firebaseStoredHash, STORED_HASH_FORMATS } from '../../core/password/formats/index.js'
import type { FirebaseScryptParameters } from '../../core/password/formats/index.js'
import { passwordHasher } from '../../core/password/hashing.js'

interface Vector {
  format: string
  password: string
  stored: string
  source?: string
  firebase?: FirebaseScryptParameters
}

function vectors(file: string): Vector[] {
  return JSON.parse(readFileSync(new URL(`../fixtures/password-vectors/${file}`, import.meta.url), 'utf8')) as Vector[]
}

const all = [...vectors('python.json'), ...vectors('node.json'), ...vectors('published.json')]
const firebase = all.find((vector) => vector.firebase)!.firebase!
const hasher = passwordHasher({ imported: { firebase }, argon2: { memoryCost: 1024, timeCost: 1, parallelism: 1 } })

/** A password that differs from the right one in its last character. */
function wrong(password: string): string {
  return password.slice(0, -1) + (password.endsWith('!') ? '?' : '!')
}

describe('imported hash vectors from each format’s reference implementation', () => {
  it.each(all.map((vector) => [vector.format, vector.stored, vector] as const))(
    'recognises the %s hash %s and accepts its password',
    async (format, stored, vector) => {
      expect(findFormat(stored)?.id).toBe(format)
      expect(await hasher.verify(stored, vector.password)).toEqual({ valid: true, needsRehash: true })
    },
  )

  it.each(all.map((vector) => [vector.format, vector.stored, vector] as const))(
    'refuses a wrong password for the %s hash %s',
    async (_format, stored, vector) => {
      expect(await hasher.verify(stored, wrong(vector.password))).toEqual({ valid: false, needsRehash: false })
    },
  )
})

describe('bcrypt', () => {
  it('reads only the first 72 bytes of a password, as every bcrypt does', async () => {
    const vector = all.find((v) => v.format === 'bcrypt' && v.password.length === 72)!
    expect((await hasher.verify(vector.stored, vector.password + 'ignored')).valid).toBe(true)
  })

  it('refuses a stored cost above the ceiling instead of running it', async () => {
    const stored = '$2b$31$' + 'a'.repeat(53)
    expect(await hasher.verify(stored, 'x')).toEqual({ valid: false, needsRehash: false })
  })
})

describe('Firebase modified scrypt', () => {
  const vector = all.find((v) => v.format === 'firebase-scrypt')!

  it('never verifies without the project parameters', async () => {
    expect((await passwordHasher().verify(vector.stored, vector.password)).valid).toBe(false)
  })

  it('refuses the right password under another project’s signer key', async () => {
    const other = passwordHasher({ imported: { firebase: { ...firebase, signerKey: 'AAAA' + firebase.signerKey.slice(4) } } })
    expect((await other.verify(vector.stored, vector.password)).valid).toBe(false)
  })

  it('refuses the right password with another salt separator', async () => {
    const other = passwordHasher({ imported: { firebase: { ...firebase, saltSeparator: 'CA==' } } })
    expect((await other.verify(vector.stored, vector.password)).valid).toBe(false)
  })

  it('builds the stored form from the exported salt and hash', () => {
    const [salt, hash] = vector.stored.split('$').slice(2)
    expect(firebaseStoredHash(salt!, hash!)).toBe(vector.stored)
  })
})

describe('better-auth scrypt', () => {
  it('accepts a hash written by better-auth’s own hashPassword', async () => {
    const stored = await betterAuthHashPassword('better auth pässword')
    expect(findFormat(stored)?.id).toBe('better-auth-scrypt')
    expect(await hasher.verify(stored, 'better auth pässword')).toEqual({ valid: true, needsRehash: true })
    expect((await hasher.verify(stored, 'better auth password')).valid).toBe(false)
  })

  it('normalises the password to NFKC as better-auth does', async () => {
    const stored = await betterAuthHashPassword('\u00e9t\u00e9')
    expect((await hasher.verify(stored, 'e\u0301te\u0301')).valid).toBe(true)
  })
})

describe('unknown and malformed stored hashes', () => {
  const malformed = [
    '',
    'plain text password',
    '$md5$abc',
    '$argon2id$v=19$m=65536,t=3,p=4$$',
    '$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$!!!!',
    '$argon2id$v=19$m=99999999999,t=3,p=4$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA',
    '$argon2id$v=19$m=65536,t=3,p=4,x=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA',
    '$argon2d$v=19$m=65536,t=3,p=4$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA',
    '$scrypt$ln=40,r=8,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA',
    '$scrypt$ln=14,r=8$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA',
    '$2b$10$short',
    'pbkdf2_sha256$0$salt$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaA==',
    'pbkdf2_sha256$99999999$salt$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaA==',
    'pbkdf2_sha256$1000$salt$not base64',
    '$pbkdf2-sha256$1000$$',
    '$firebase-scrypt$onlyonefield',
    '$firebase-scrypt$%%%$%%%',
    'abcd:ef',
    '0'.repeat(32) + ':' + 'z'.repeat(128),
    '$'.repeat(5000),
  ]

  it.each(malformed)('answers valid: false without throwing for %j', async (stored) => {
    await expect(hasher.verify(stored, 'password')).resolves.toEqual({ valid: false, needsRehash: false })
  })

  it('answers valid: false for a stored value that is not a string', async () => {
    await expect(hasher.verify(null as unknown as string, 'password')).resolves.toEqual({ valid: false, needsRehash: false })
  })

  it('tries the app’s own formats after the built-in ones, and a throwing one is a refusal', async () => {
    const custom = passwordHasher({
      imported: {
        formats: [
          { id: 'plain-for-test', recognises: (s) => s.startsWith('{plain}'), verify: async (s, p) => s === `{plain}${p}` },
          { id: 'broken', recognises: (s) => s.startsWith('{broken}'), verify: async () => { throw new Error('boom') } },
        ],
      },
    })
    expect(await custom.verify('{plain}secret', 'secret')).toEqual({ valid: true, needsRehash: true })
    expect(await custom.verify('{plain}secret', 'other')).toEqual({ valid: false, needsRehash: false })
    expect(await custom.verify('{broken}x', 'x')).toEqual({ valid: false, needsRehash: false })
  })

  it('has exactly one recogniser for each vector', () => {
    for (const vector of all) expect(STORED_HASH_FORMATS.filter((f) => f.recognises(vector.stored))).toHaveLength(1)
  })
})
