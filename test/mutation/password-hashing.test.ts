/**
 * The parsing under every stored hash, at the unit level: base64 (standard, unpadded, and the
 * adapted alphabet of passlib), hex, the constant-time comparison and the PHC string. A parser that
 * takes a malformed hash may read a digest of the wrong length or parameters the attacker chose.
 */
import { describe, expect, it } from 'vitest'
import { bytesEqual, decodeAdaptedBase64, decodeBase64, decodeHex, encodeAdaptedBase64, encodeBase64Unpadded, utf8 } from '../../core/password/encoding.js'
import { formatPhc, integerParameter, parsePhc } from '../../core/password/phc.js'
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
