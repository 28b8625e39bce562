/**
 * The parsing under every stored hash, at the unit level: base64 (standard, unpadded, and the
 * adapted alphabet of passlib), hex, the constant-time comparison and the PHC string. A parser that
 * takes a malformed hash may read a digest of the wrong length or parameters the attacker chose.
 */
import { readFileSync } from 'node:fs'
import { beforeEach, describe, expect, it } from 'vitest'
import type { FirebaseScryptParameters } from '../../core/password/formats/index.js'
import { bcryptFormat } from '../../core/password/formats/bcrypt.js'
import { betterAuthScryptFormat } from '../../core/password/formats/better-auth-scrypt.js'
import { firebaseScryptFormat, firebaseScryptHash } from '../../core/password/formats/firebase-scrypt.js'
import { djangoPbkdf2Format, phcPbkdf2Format } from '../../core/password/formats/pbkdf2.js'
import { argon2Format } from '../../core/password/formats/argon2.js'
import { scryptFormat } from '../../core/password/formats/scrypt.js'
import { bytesEqual, decodeAdaptedBase64, decodeBase64, decodeHex, encodeAdaptedBase64, encodeBase64Unpadded, utf8 } from '../../core/password/encoding.js'
import { formatPhc, integerParameter, parsePhc } from '../../core/password/phc.js'
import { DEFAULT_ARGON2_PARAMETERS, DEFAULT_SCRYPT_PARAMETERS, passwordHasher } from '../../core/password/hashing.js'
import { verifyOrMigrate } from '../../core/password/migrate.js'
import { argon2Digest, scryptDigest } from '../../core/password/kdf.js'
import { parseArgon2Hash } from '../../core/password/formats/argon2.js'
import { parseScryptHash } from '../../core/password/formats/scrypt.js'

const bytes = (...values: number[]) => new Uint8Array(values)

describe('base64', () => {
  it('encodes without padding, and decodes with or without it', () => {
    expect(encodeBase64Unpadded(bytes(0xfb, 0xff))).toBe('+/8')
    expect(encodeBase64Unpadded(bytes(1, 2, 3))).toBe('AQID')
    expect(encodeBase64Unpadded(bytes())).toBe('')
    expect(decodeBase64('+/8')).toEqual(bytes(0xfb, 0xff))
    expect(decodeBase64('+/8=')).toEqual(bytes(0xfb, 0xff))
    expect(decodeBase64('AQ==')).toEqual(bytes(1))
    expect(decodeBase64('AQID')).toEqual(bytes(1, 2, 3))
    expect(decodeBase64('')).toEqual(bytes())
  })

  it('refuses what is not base64: other letters, too much padding, padding inside, an impossible length', () => {
    for (const text of ['AQ-D', 'AQ_D', 'AQ===', 'A=QI', 'AQIDB', ' AQID', 'AQID ', 'AQID\n']) expect(decodeBase64(text)).toBeUndefined()
  })

  it('decodes the adapted alphabet (. for +), and refuses a + in it', () => {
    expect(decodeAdaptedBase64('./8')).toEqual(bytes(0xfb, 0xff))
    expect(decodeAdaptedBase64('+/8')).toBeUndefined()
    expect(encodeAdaptedBase64(bytes(0xfb, 0xef, 0xbe))).toBe('....')
    expect(encodeAdaptedBase64(bytes(0xfb, 0xff))).toBe('./8')
  })
})

describe('hex', () => {
  it('decodes either case, and refuses an odd length or another letter', () => {
    expect(decodeHex('00ffA0')).toEqual(bytes(0, 255, 160))
    expect(decodeHex('')).toEqual(bytes())
    for (const text of ['0', 'abc', '0g', 'zz', ' 00', '00 ']) expect(decodeHex(text)).toBeUndefined()
  })
})

describe('bytesEqual', () => {
  it('is true for the same bytes only, whatever byte differs', () => {
    expect(bytesEqual(bytes(1, 2, 3), bytes(1, 2, 3))).toBe(true)
    expect(bytesEqual(bytes(), bytes())).toBe(true)
    expect(bytesEqual(bytes(1, 2, 3), bytes(1, 2, 4))).toBe(false)
    expect(bytesEqual(bytes(9, 2, 3), bytes(1, 2, 3))).toBe(false)
    expect(bytesEqual(bytes(1, 2), bytes(1, 2, 3))).toBe(false)
    expect(bytesEqual(bytes(1, 2, 3), bytes(1, 2))).toBe(false)
  })

  it('encodes text as UTF-8', () => {
    expect(utf8('é')).toEqual(bytes(0xc3, 0xa9))
  })
})

describe('PHC strings', () => {
  const salt = 'c2FsdHNhbHQ'
  const digest = 'ZGlnZXN0'

  it('parses the id, version, parameters, salt and digest', () => {
    expect(parsePhc(`$argon2id$v=19$m=65536,t=3,p=4$${salt}$${digest}`)).toEqual({
      id: 'argon2id',
      version: 19,
      parameters: { m: '65536', t: '3', p: '4' },
      salt: utf8('saltsalt'),
      digest: utf8('digest'),
    })
    const unversioned = parsePhc(`$scrypt$ln=17,r=8,p=1$${salt}$${digest}`)
    expect(unversioned).toEqual({ id: 'scrypt', parameters: { ln: '17', r: '8', p: '1' }, salt: utf8('saltsalt'), digest: utf8('digest') })
    expect(unversioned).not.toHaveProperty('version')
  })

  it.each([
    ['no leading $', `argon2id$v=19$m=1$${salt}$${digest}`],
    ['an empty id', `$$m=1$${salt}$${digest}`],
    ['an id in capitals', `$Argon2id$m=1$${salt}$${digest}`],
    ['an id of 33 letters', `$${'a'.repeat(33)}$m=1$${salt}$${digest}`],
    ['no digest', `$argon2id$m=1$${salt}`],
    ['a field too many', `$argon2id$v=19$m=1$${salt}$${digest}$x`],
    ['a version that is no number', `$argon2id$v=x$m=1$${salt}$${digest}`],
    ['a version of five digits', `$argon2id$v=12345$m=1$${salt}$${digest}`],
    ['a version without parameters', `$argon2id$v=19$${salt}$${digest}`],
    ['a parameter without a value', `$argon2id$m$${salt}$${digest}`],
    ['a parameter value of 65 characters', `$argon2id$m=${'1'.repeat(65)}$${salt}$${digest}`],
    ['a parameter name of 33 letters', `$argon2id$${'m'.repeat(33)}=1$${salt}$${digest}`],
    ['a parameter with a space', `$argon2id$m=1 $${salt}$${digest}`],
    ['a parameter twice', `$argon2id$m=1,m=2$${salt}$${digest}`],
    ['an empty salt', `$argon2id$m=1$$${digest}`],
    ['an empty digest', `$argon2id$m=1$${salt}$`],
    ['a salt that is not base64', `$argon2id$m=1$!!$${digest}`],
    ['a digest that is not base64', `$argon2id$m=1$${salt}$!!`],
    ['more than 1024 characters', `$argon2id$m=1$${salt}$${'A'.repeat(1024)}`],
  ])('refuses %s', (_, stored) => expect(parsePhc(stored)).toBeUndefined())

  it('takes a string of 1024 characters, ids of 32 letters and values of 64', () => {
    const stored = `$${'a'.repeat(32)}$${'m'.repeat(32)}=${'1'.repeat(64)}$${salt}$`
    expect(parsePhc(`${stored}${'A'.repeat(1024 - stored.length)}`)).toBeDefined()
    expect(parsePhc(`$a-1$v=1234$m=a/+.-Z$${salt}$${digest}`)).toMatchObject({ id: 'a-1', version: 1234, parameters: { m: 'a/+.-Z' } })
  })

  it('decodes the salt and digest with the decoder given', () => {
    expect(parsePhc(`$pbkdf2-sha256$i=1$./8$./8`, decodeAdaptedBase64)).toMatchObject({ salt: bytes(0xfb, 0xff), digest: bytes(0xfb, 0xff) })
  })

  it('reads an integer parameter within its bounds only', () => {
    const hash = parsePhc(`$scrypt$ln=17,r=08,big=12345678901,x=1a$${salt}$${digest}`)!
    expect(integerParameter(hash, 'ln', 1, 17)).toBe(17)
    expect(integerParameter(hash, 'ln', 17, 20)).toBe(17)
    expect(integerParameter(hash, 'ln', 1, 16)).toBeUndefined()
    expect(integerParameter(hash, 'ln', 18, 20)).toBeUndefined()
    expect(integerParameter(hash, 'r', 1, 16)).toBe(8)
    expect(integerParameter(hash, 'big', 0, Number.MAX_SAFE_INTEGER)).toBeUndefined()
    expect(integerParameter(hash, 'x', 0, 100)).toBeUndefined()
    expect(integerParameter(hash, 'p', 0, 100)).toBeUndefined()
  })

  it('formats what it parses back to the same string', () => {
    for (const stored of [`$argon2id$v=19$m=65536,t=3,p=4$${salt}$${digest}`, `$scrypt$ln=17,r=8,p=1$${salt}$${digest}`]) {
      expect(formatPhc(parsePhc(stored)!)).toBe(stored)
    }
    expect(formatPhc({ id: 'x', parameters: { a: '1' }, salt: bytes(0xfb, 0xff), digest: bytes(1) }, encodeAdaptedBase64)).toBe('$x$a=1$./8$AQ')
  })
})

describe('the argon2 and scrypt hashes a parser takes', () => {
  const salt = 'c2FsdHNhbHQ' // 8 bytes
  const digest = 'ZGlnZQ' // 4 bytes
  const argon2 = (rest: string, id = 'argon2id') => parseArgon2Hash(`$${id}$${rest}$${salt}$${digest}`)
  const scrypt = (parameters: string, head = '$scrypt') => parseScryptHash(`${head}$${parameters}$${salt}$${digest}`)

  it('reads argon2id and argon2i at versions 19 and 16 (16 when none is written)', () => {
    expect(argon2('v=19$m=64,t=1,p=8')).toMatchObject({
      computation: { variant: 'argon2id', version: 0x13, memoryCost: 64, timeCost: 1, parallelism: 8, outputLength: 4 },
      salt: utf8('saltsalt'),
    })
    expect(argon2('m=8,t=64,p=1', 'argon2i')?.computation).toMatchObject({ variant: 'argon2i', version: 0x10, memoryCost: 8, timeCost: 64 })
    expect(argon2('v=16$m=8,t=1,p=1')?.computation.version).toBe(0x10)
    expect(argon2(`m=${4 * 1024 * 1024 - 1},t=1,p=255`)?.computation).toMatchObject({ memoryCost: 4194303, parallelism: 255 })
  })

  it.each([
    ['argon2d', () => argon2('m=8,t=1,p=1', 'argon2d')],
    ['another version', () => argon2('v=18$m=8,t=1,p=1')],
    ['another parameter', () => argon2('m=8,t=1,p=1,x=1')],
    ['no parallelism', () => argon2('m=8,t=1')],
    ['no memory cost', () => argon2('t=1,p=1')],
    ['no time cost', () => argon2('m=8,p=1')],
    ['a parallelism of 0 or 256', () => argon2('m=8,t=1,p=0') ?? argon2('m=2048,t=1,p=256')],
    ['less memory than 8 per lane', () => argon2('m=63,t=1,p=8')],
    ['more memory than the limit', () => argon2(`m=${4 * 1024 * 1024},t=1,p=1`)],
    ['a time cost of 0 or 65', () => argon2('m=8,t=0,p=1') ?? argon2('m=8,t=65,p=1')],
    ['a salt under 8 bytes', () => parseArgon2Hash(`$argon2id$m=8,t=1,p=1$c2FsdHNhbA$${digest}`)],
    ['a digest under 4 bytes', () => parseArgon2Hash(`$argon2id$m=8,t=1,p=1$${salt}$ZGln`)],
  ])('refuses an argon2 hash with %s', (_, parse) => expect(parse()).toBeUndefined())

  it('takes a salt of 8 bytes and a digest of 4', () => {
    expect(parseArgon2Hash(`$argon2id$m=8,t=1,p=1$${salt}$${digest}`)?.digest).toHaveLength(4)
  })

  it('reads scrypt within its limits', () => {
    expect(scrypt('ln=10,r=8,p=1')).toEqual({ ln: 10, computation: { N: 1024, r: 8, p: 1, outputLength: 4 }, salt: utf8('saltsalt'), digest: utf8('dige') })
    expect(scrypt('ln=20,r=1,p=16')?.computation).toMatchObject({ N: 2 ** 20, r: 1, p: 16 })
    expect(scrypt('ln=1,r=32,p=1')?.computation.r).toBe(32)
    expect(scrypt('ln=16,r=32,p=1')?.ln).toBe(16)
  })

  it.each([
    ['a version', () => scrypt('ln=10,r=8,p=1', '$scrypt$v=1')],
    ['another id', () => scrypt('ln=10,r=8,p=1', '$scrypt2')],
    ['another parameter', () => scrypt('ln=10,r=8,p=1,x=1')],
    ['no ln', () => scrypt('r=8,p=1')],
    ['no r', () => scrypt('ln=10,p=1')],
    ['no p', () => scrypt('ln=10,r=8')],
    ['ln 0 or 21', () => scrypt('ln=0,r=8,p=1') ?? scrypt('ln=21,r=1,p=1')],
    ['r 0 or 33', () => scrypt('ln=10,r=0,p=1') ?? scrypt('ln=10,r=33,p=1')],
    ['p 0 or 17', () => scrypt('ln=10,r=8,p=0') ?? scrypt('ln=10,r=8,p=17')],
    ['more than 1 GiB of memory', () => scrypt('ln=20,r=9,p=1')],
  ])('refuses a scrypt hash with %s', (_, parse) => expect(parse()).toBeUndefined())

  it('takes exactly 1 GiB of memory', () => {
    expect(scrypt('ln=20,r=8,p=1')?.ln).toBe(20)
  })
})

describe('the hasher’s parameters', () => {
  it.each([
    ['argon2.parallelism', { argon2: { parallelism: 0 } }],
    ['argon2.parallelism', { argon2: { parallelism: 256, memoryCost: 4096 } }],
    ['argon2.memoryCost', { argon2: { parallelism: 2, memoryCost: 15 } }],
    ['argon2.memoryCost', { argon2: { memoryCost: 4 * 1024 * 1024 } }],
    ['argon2.timeCost', { argon2: { timeCost: 0 } }],
    ['argon2.timeCost', { argon2: { timeCost: 65 } }],
    ['argon2.timeCost', { argon2: { timeCost: 1.5 } }],
    ['scrypt.ln', { scrypt: { ln: 0 } }],
    ['scrypt.ln', { scrypt: { ln: 21 } }],
    ['scrypt.r', { scrypt: { r: 0 } }],
    ['scrypt.r', { scrypt: { r: 33 } }],
    ['scrypt.p', { scrypt: { p: 0 } }],
    ['scrypt.p', { scrypt: { p: 17 } }],
  ])('refuses %s out of its range: %j', (name, options) => {
    expect(() => passwordHasher(options)).toThrow(new RegExp(`^password hashing: ${name.replace('.', '\\.')} must be an integer in \\[\\d+, \\d+\\], got `))
  })

  it('takes each parameter at its bounds', () => {
    for (const options of [
      { argon2: { parallelism: 1, memoryCost: 8, timeCost: 1 } },
      { argon2: { parallelism: 255, memoryCost: 2040, timeCost: 64 } },
      { argon2: { memoryCost: 4 * 1024 * 1024 - 1 } },
      { scrypt: { ln: 1, r: 1, p: 1 } },
      { scrypt: { ln: 20, r: 32, p: 16 } },
    ]) {
      expect(() => passwordHasher(options)).not.toThrow()
    }
    expect(() => passwordHasher({ argon2: { parallelism: 2, memoryCost: 16 } })).not.toThrow()
  })
})

describe('the hasher’s answers', () => {
  const cheapArgon2 = { memoryCost: 64, timeCost: 1, parallelism: 1 }
  const cheapScrypt = { ln: 4, r: 8, p: 1 }

  it('refuses what is no string, an unknown format, and a format that throws', async () => {
    const throwing = { id: 'x', recognises: (stored: string) => stored.startsWith('$x$'), verify: async () => Promise.reject(new Error('bug')) }
    const hasher = passwordHasher({ argon2: cheapArgon2, imported: { formats: [throwing] } })
    const stored = await hasher.hash('pw')
    expect(await hasher.verify(stored, 1 as never)).toEqual({ valid: false, needsRehash: false })
    expect(await hasher.verify(1 as never, 'pw')).toEqual({ valid: false, needsRehash: false })
    expect(await hasher.verify('$unknown$a', 'pw')).toEqual({ valid: false, needsRehash: false })
    expect(await hasher.verify('$x$1', 'pw')).toEqual({ valid: false, needsRehash: false })
    expect(await hasher.verify(stored, 'pw')).toEqual({ valid: true, needsRehash: false })
  })

  it('asks for a re-hash of an argon2 hash whose every parameter is not the configured one', async () => {
    const current = passwordHasher({ argon2: cheapArgon2 })
    for (const other of [{ ...cheapArgon2, memoryCost: 128 }, { ...cheapArgon2, timeCost: 2 }, { ...cheapArgon2, parallelism: 2 }]) {
      const stored = await passwordHasher({ argon2: other }).hash('pw')
      expect(await current.verify(stored, 'pw')).toEqual({ valid: true, needsRehash: true })
    }
    const stored = await current.hash('pw')
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=64,t=1,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
    expect(await current.verify(stored.replace('$argon2id$', '$argon2i$'), 'pw')).toMatchObject({ valid: false })
    expect(await passwordHasher({ argon2: cheapArgon2, algorithm: 'scrypt', scrypt: cheapScrypt }).verify(stored, 'pw')).toEqual({ valid: true, needsRehash: true })
  })

  it('asks for a re-hash of a scrypt hash whose every parameter is not the configured one', async () => {
    const current = passwordHasher({ algorithm: 'scrypt', scrypt: cheapScrypt })
    const stored = await current.hash('pw')
    expect(stored).toMatch(/^\$scrypt\$ln=4,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
    expect(await current.verify(stored, 'pw')).toEqual({ valid: true, needsRehash: false })
    for (const other of [{ ...cheapScrypt, ln: 5 }, { ...cheapScrypt, r: 4 }, { ...cheapScrypt, p: 2 }]) {
      expect(await current.verify(await passwordHasher({ algorithm: 'scrypt', scrypt: other }).hash('pw'), 'pw')).toEqual({ valid: true, needsRehash: true })
    }
    expect(await passwordHasher({ argon2: cheapArgon2 }).verify(stored, 'pw')).toEqual({ valid: true, needsRehash: true })
  })

  it('salts each hash afresh, and verifies one only with its own password', async () => {
    const hasher = passwordHasher({ argon2: cheapArgon2 })
    const [a, b] = [await hasher.hash('pw'), await hasher.hash('pw')]
    expect(a).not.toBe(b)
    expect((await hasher.verify(a, 'pW')).valid).toBe(false)
    await expect(hasher.dummyVerify('pw')).resolves.toBeUndefined()
    await expect(hasher.dummyVerify(undefined as never)).resolves.toBeUndefined()
  })
})

describe('an imported hash with something around it', () => {
  const vectors = ['python.json', 'node.json', 'published.json'].flatMap(
    (file) => JSON.parse(readFileSync(new URL(`../fixtures/password-vectors/${file}`, import.meta.url), 'utf8')) as { format: string; password: string; stored: string; firebase?: FirebaseScryptParameters }[],
  )
  const firebase = vectors.find((vector) => vector.firebase)!.firebase!
  const hasher = { verify: (stored: string, password: string) => passwordHasher({ imported: { firebase }, argon2: { memoryCost: 1024, timeCost: 1, parallelism: 1 } }).verify(stored, password) }
  // One vector of each format is enough: the checks are per format, not per vector.
  const oneOfEach = [...new Map(vectors.map((vector) => [vector.format, vector])).values()]

  it.each(oneOfEach.map((vector) => [vector.format, vector] as const))('refuses a %s hash with a character before or after it, or its prefix twice', async (_format, vector) => {
    const head = vector.stored.slice(0, vector.stored.indexOf('$', 1) + 1)
    const around = [`${vector.stored}x`, `x${vector.stored}`, `${vector.stored}$`, ...(head && !head.startsWith('$firebase') ? [`${head}${vector.stored}`] : [])]
    for (const stored of around) expect(await hasher.verify(stored, vector.password), stored).toEqual({ valid: false, needsRehash: false })
  })
})

describe('verifyOrMigrate with a cheap hasher', () => {
  // Made in each test, not when the file loads: a hasher that throws must fail a test, not the file.
  let hasher: ReturnType<typeof passwordHasher>
  let older: ReturnType<typeof passwordHasher>
  beforeEach(() => {
    hasher = passwordHasher({ argon2: { memoryCost: 64, timeCost: 1, parallelism: 1 } })
    older = passwordHasher({ argon2: { memoryCost: 128, timeCost: 1, parallelism: 1 } })
  })
  const user = { id: 'u1' }

  it('re-hashes a valid outdated hash, leaves a current one alone, and refuses a wrong password without a new hash', async () => {
    expect(await verifyOrMigrate(hasher, await hasher.hash('pw'), 'pw')).toEqual({ valid: true, checkedBy: 'stored' })
    const migrated = await verifyOrMigrate(hasher, await older.hash('pw'), 'pw')
    expect(migrated).toMatchObject({ valid: true, checkedBy: 'stored' })
    expect(await hasher.verify(migrated.newHash!, 'pw')).toEqual({ valid: true, needsRehash: false })
    expect(await verifyOrMigrate(hasher, await older.hash('pw'), 'wrong')).toEqual({ valid: false, checkedBy: 'stored' })
  })

  it('asks the legacy system only for a user without a hash (none, or an empty one), and hands back our hash', async () => {
    const asked: unknown[] = []
    const verifyLegacyPassword = async (who: typeof user, password: string) => (asked.push([who, password]), password === 'legacy pw')
    expect((await verifyOrMigrate(hasher, await hasher.hash('pw'), 'legacy pw', { user, verifyLegacyPassword })).valid).toBe(false)
    expect(asked).toEqual([])
    for (const stored of [null, undefined, '']) {
      const result = await verifyOrMigrate(hasher, stored, 'legacy pw', { user, verifyLegacyPassword })
      expect(result).toMatchObject({ valid: true, checkedBy: 'legacy' })
      expect(await hasher.verify(result.newHash!, 'legacy pw')).toEqual({ valid: true, needsRehash: false })
    }
    expect(asked).toEqual([[user, 'legacy pw'], [user, 'legacy pw'], [user, 'legacy pw']])
  })

  it('takes only true from the legacy system, and refuses when it says no or throws, after a dummy hash', async () => {
    const dummies: string[] = []
    const counted = { ...hasher, dummyVerify: async (password: string) => void dummies.push(password) }
    expect(await verifyOrMigrate(counted, null, 'pw', { user, verifyLegacyPassword: async () => 'yes' as never })).toEqual({ valid: false, checkedBy: 'legacy' })
    expect(await verifyOrMigrate(counted, null, 'pw', { user, verifyLegacyPassword: async () => false })).toEqual({ valid: false, checkedBy: 'legacy' })
    const down = await verifyOrMigrate(counted, null, 'pw', { user, verifyLegacyPassword: async () => Promise.reject(new Error('down')) })
    expect(down).toEqual({ valid: false, checkedBy: 'legacy', legacyFailed: true })
    expect(await verifyOrMigrate(counted, null, 'pw')).toEqual({ valid: false, checkedBy: 'none' })
    expect(dummies).toEqual(['pw', 'pw', 'pw', 'pw'])
  })

  it('writes RFC 9106’s second recommended argon2 parameters and scrypt ln=17, r=8, p=1 by default', () => {
    expect(DEFAULT_ARGON2_PARAMETERS).toEqual({ memoryCost: 65536, timeCost: 3, parallelism: 4 })
    expect(DEFAULT_SCRYPT_PARAMETERS).toEqual({ ln: 17, r: 8, p: 1 })
    expect(Object.isFrozen(DEFAULT_ARGON2_PARAMETERS) && Object.isFrozen(DEFAULT_SCRYPT_PARAMETERS)).toBe(true)
  })
})

describe('each format on its own, refusing what it cannot read without computing anything', () => {
  const context = { imported: {}, argon2Implementation: 'auto' } as never
  const firebase = { signerKey: Buffer.from('signer-key-bytes').toString('base64'), saltSeparator: 'Bw==', rounds: 8, memoryCost: 4 }
  const salt = new Uint8Array(16)

  it('firebase: refuses parameters out of range, and takes them at their bounds', async () => {
    expect(await firebaseScryptHash('pw', salt, firebase)).toHaveLength(16)
    expect(await firebaseScryptHash('pw', salt, { ...firebase, rounds: 1, memoryCost: 1 })).toHaveLength(16)
    expect(await firebaseScryptHash('pw', salt, { ...firebase, rounds: 32, memoryCost: 1 })).toHaveLength(16)
    expect(await firebaseScryptHash('pw', salt, { ...firebase, saltSeparator: '' })).toHaveLength(16)
    for (const bad of [
      { signerKey: '' },
      { signerKey: '!!' },
      { saltSeparator: '!!' },
      { rounds: 0 },
      { rounds: 33 },
      { rounds: 1.5 },
      { memoryCost: 0 },
      { memoryCost: 21 },
      { memoryCost: 2.5 },
    ]) {
      expect(await firebaseScryptHash('pw', salt, { ...firebase, ...bad }), JSON.stringify(bad)).toBeUndefined()
    }
  })

  it('firebase: refuses without the project’s parameters, or with a salt or digest missing or empty', async () => {
    const digest = Buffer.from((await firebaseScryptHash('pw', salt, firebase))!).toString('base64')
    const stored = `$firebase-scrypt$${Buffer.from(salt).toString('base64')}$${digest}`
    const withParameters = { imported: { firebase }, argon2Implementation: 'auto' } as never
    expect(await firebaseScryptFormat.verify(stored, 'pw', withParameters)).toBe(true)
    expect(await firebaseScryptFormat.verify(stored, 'pw', context)).toBe(false)
    for (const bad of [`$firebase-scrypt$!!$${digest}`, `$firebase-scrypt$AAAA$!!`, `$firebase-scrypt$AAAA$`, `$firebase-scrypt$$${digest}`]) {
      expect(await firebaseScryptFormat.verify(bad, 'pw', withParameters), bad).toBe(false)
    }
    expect(await firebaseScryptFormat.verify(stored, 'pw', { imported: { firebase: { ...firebase, rounds: 0 } } } as never)).toBe(false)
  })

  it('bcrypt: refuses a cost under 4 or over 18 and a malformed hash, before loading bcrypt', async () => {
    const body = 'a'.repeat(53)
    for (const stored of [`$2b$03$${body}`, `$2b$19$${body}`, `$2b$1$${body}`, `$2b$04$${'a'.repeat(52)}`, `$2b$04$${body}x`, `x$2b$04$${body}`, `$2x$04$${body}`]) {
      expect(await bcryptFormat.verify(stored, 'pw', context), stored).toBe(false)
    }
  })

  it('pbkdf2: refuses iterations out of range, a digest under 16 or over 64 bytes, and malformed fields', async () => {
    const digest = (bytes: number) => Buffer.alloc(bytes, 1).toString('base64')
    for (const stored of [
      `pbkdf2_sha256$0$salt$${digest(32)}`,
      `pbkdf2_sha256$01$salt$${digest(32)}`,
      `pbkdf2_sha256$100000000$salt$${digest(32)}`,
      `pbkdf2_sha256$10000001$salt$${digest(32)}`,
      `pbkdf2_sha256$1$salt$${digest(15)}`,
      `pbkdf2_sha256$1$salt$${digest(65)}`,
      `pbkdf2_sha512$1$salt$${digest(32)}`,
      `pbkdf2_sha256$1$$${digest(32)}`,
      `pbkdf2_sha256$1$salt$${digest(32).slice(0, -2)}=A`,
    ]) {
      expect(await djangoPbkdf2Format.verify(stored, 'pw', context), stored).toBe(false)
    }
    const adapted = (bytes: number) => Buffer.alloc(bytes, 1).toString('base64').replace(/=+$/, '').replaceAll('+', '.')
    for (const stored of [
      `$pbkdf2-sha256$0$${adapted(16)}$${adapted(32)}`,
      `$pbkdf2-sha256$i=10000001$${adapted(16)}$${adapted(32)}`,
      `$pbkdf2-sha256$1$${adapted(16)}$${adapted(15)}`,
      `$pbkdf2-sha1$1$${adapted(16)}$${adapted(32)}`,
      `$pbkdf2-sha256$1$A$${adapted(32)}`,
      `$pbkdf2-sha256$1$${adapted(16)}$${adapted(32)}A`,
    ]) {
      expect(await phcPbkdf2Format.verify(stored, 'pw', context), stored).toBe(false)
    }
  })

  it('pbkdf2: takes 16 and 64 byte digests, and ten million iterations as the most', async () => {
    const { pbkdf2Sync } = await import('node:crypto')
    for (const bytes of [16, 64]) {
      const stored = `pbkdf2_sha256$2$salt$${pbkdf2Sync('pw', 'salt', 2, bytes, 'sha256').toString('base64')}`
      expect(await djangoPbkdf2Format.verify(stored, 'pw', context), stored).toBe(true)
    }
    const salt = Buffer.alloc(16, 7)
    const phc = `$pbkdf2-sha512$2$${salt.toString('base64').replace(/=+$/, '')}$${pbkdf2Sync('pw', salt, 2, 64, 'sha512').toString('base64').replace(/=+$/, '')}`
    expect(await phcPbkdf2Format.verify(phc, 'pw', context)).toBe(true)
  })

  it('better-auth: refuses a hash with anything around it or a digest of the wrong length', async () => {
    const hex = (n: number) => 'a'.repeat(n)
    for (const stored of [`${hex(32)}:${hex(127)}`, `x${hex(32)}:${hex(128)}`, `${hex(32)}:${hex(128)}x`, `${hex(31)}:${hex(128)}`]) {
      expect(betterAuthScryptFormat.recognises(stored), stored).toBe(false)
      expect(await betterAuthScryptFormat.verify(stored, 'pw', context), stored).toBe(false)
    }
  })

  it('argon2 and scrypt: refuse a hash they cannot parse', async () => {
    expect(await argon2Format.verify('$argon2id$m=1', 'pw', context)).toBe(false)
    expect(await scryptFormat.verify('$scrypt$ln=1', 'pw', context)).toBe(false)
  })
})

describe('base64 at its edges', () => {
  it('decodes whatever padding is left off, and no padding in the middle', () => {
    expect(decodeBase64('AQIDBA')).toEqual(bytes(1, 2, 3, 4))
    expect(decodeBase64('AQIDBA==')).toEqual(bytes(1, 2, 3, 4))
    expect(decodeBase64('AQIDBAU')).toEqual(bytes(1, 2, 3, 4, 5))
    expect(decodeBase64('AQIDBAU=')).toEqual(bytes(1, 2, 3, 4, 5))
    expect(decodeBase64('AQIDB')).toBeUndefined()
    expect(decodeBase64('AQIDBQ=A')).toBeUndefined()
    expect(decodeBase64('AQ=ID')).toBeUndefined()
    expect(encodeBase64Unpadded(bytes(1, 2, 3, 4))).toBe('AQIDBA')
    expect(decodeHex('0102')).toHaveLength(2)
    expect(decodeBase64('AQID')).toHaveLength(3)
  })
})

describe('a hash at the configured parameters but another version or length', () => {
  const salt = new Uint8Array(16).fill(3)

  it('asks for a re-hash of argon2 version 16, or of a digest that is not 32 bytes', async () => {
    const cheap = { memoryCost: 64, timeCost: 1, parallelism: 1 }
    const hasher = passwordHasher({ argon2: cheap })
    const stored = async (version: 0x10 | 0x13, outputLength: number) => {
      const digest = await argon2Digest({ variant: 'argon2id', version, outputLength, ...cheap }, 'pw', salt)
      return formatPhc({ id: 'argon2id', version, parameters: { m: '64', t: '1', p: '1' }, salt, digest })
    }
    expect(await hasher.verify(await stored(0x13, 32), 'pw')).toEqual({ valid: true, needsRehash: false })
    expect(await hasher.verify(await stored(0x10, 32), 'pw')).toEqual({ valid: true, needsRehash: true })
    expect(await hasher.verify(await stored(0x13, 16), 'pw')).toEqual({ valid: true, needsRehash: true })
  })

  it('asks for a re-hash of a scrypt digest that is not 32 bytes', async () => {
    const hasher = passwordHasher({ algorithm: 'scrypt', scrypt: { ln: 4, r: 8, p: 1 } })
    const stored = async (outputLength: number) =>
      formatPhc({ id: 'scrypt', parameters: { ln: '4', r: '8', p: '1' }, salt, digest: await scryptDigest({ N: 16, r: 8, p: 1, outputLength }, utf8('pw'), salt) })
    expect(await hasher.verify(await stored(32), 'pw')).toEqual({ valid: true, needsRehash: false })
    expect(await hasher.verify(await stored(16), 'pw')).toEqual({ valid: true, needsRehash: true })
  })
})
