/**
 * Compact JWE with `alg: "dir"` and `enc: "A256CBC-HS512"` (RFC 7516, RFC 7518 §5.2), done
 * synchronously with `node:crypto`: the session cookie format of Auth.js, byte for byte.
 *
 * Contract (every module of `core/fast/`): the same bytes as jose, the same verdict. A token this
 * path writes is one jose opens; a token it opens is one jose opens to the same claims, and one it
 * refuses jose refuses too. Anything it does not recognise exactly (another `enc`, extra header
 * parameters, `zip`, `crit`) is left to jose, and runtimes without `node:crypto` use jose
 * throughout. `test/core/fast/jwe-cbc.test.ts` holds the comparison.
 *
 * @module
 */
import { base64urlDecode, base64urlEncode, concatBytes, randomBytes, syncCrypto } from './sync-crypto.js'

const encoder = new TextEncoder()
// Fatal: a token whose plaintext is not valid UTF-8 is refused, as jose refuses it.
// Stryker disable next-line StringLiteral: killed in fact, an unknown label throws at load, which the vitest runner counts as no test run
const decoder = new TextDecoder('utf-8', { fatal: true })

/** A header the fast path handles: exactly alg, enc and kid. */
interface FastHeader {
  alg: 'dir'
  enc: 'A256CBC-HS512'
  kid?: string
}

function isFastHeader(header: unknown): header is FastHeader {
  // Stryker disable next-line ConditionalExpression: equivalent, a primitive header has no alg (the checks below refuse it)
  if (!header || typeof header !== 'object') return false
  const keys = Object.keys(header)
  const h = header as Record<string, unknown>
  return (
    h.alg === 'dir' &&
    h.enc === 'A256CBC-HS512' &&
    (h.kid === undefined || typeof h.kid === 'string') &&
    keys.every((k) => k === 'alg' || k === 'enc' || k === 'kid')
  )
}

/** The 64-bit big-endian length in bits of the additional authenticated data. */
function aadLength(aad: Uint8Array): Uint8Array {
  const al = new Uint8Array(8)
  const bits = aad.length * 8
  new DataView(al.buffer).setUint32(4, bits >>> 0)
  // Stryker disable next-line ArithmeticOperator: equivalent below 512 MiB of AAD, where the high word is 0 either way
  new DataView(al.buffer).setUint32(0, Math.floor(bits / 2 ** 32))
  return al
}

function tagOf(
  macKey: Uint8Array,
  aad: Uint8Array,
  iv: Uint8Array,
  ciphertext: Uint8Array,
  al: Uint8Array = aadLength(aad),
): Uint8Array {
  const hmac = syncCrypto!.createHmac('sha512', macKey)
  hmac.update(aad)
  hmac.update(iv)
  hmac.update(ciphertext)
  hmac.update(al)
  return hmac.digest().subarray(0, 32)
}

interface EncodedHeader {
  protectedHeader: string
  aad: Uint8Array
  /** AL, the AAD's length in bits (RFC 7518 §5.2.2.1), fixed per header. */
  al: Uint8Array
}
const headers = new Map<string, EncodedHeader>()

/** The encoded protected header for a key id (a handful of kids per process: memoised). */
function headerFor(kid: string): EncodedHeader {
  let header = headers.get(kid)
  // Stryker disable next-line ConditionalExpression: equivalent, the header is the same computed again (a memo)
  if (!header) {
    const protectedHeader = base64urlEncode(encoder.encode(JSON.stringify({ alg: 'dir', enc: 'A256CBC-HS512', kid })))
    const aad = encoder.encode(protectedHeader)
    header = { protectedHeader, aad, al: aadLength(aad) }
    // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, the bound of a memo changes memory, not bytes
    if (headers.size < 64) headers.set(kid, header)
  }
  return header
}

/** A protected header the fast path handles, with its AAD and AL. */
interface ParsedHeader extends FastHeader {
  aad: Uint8Array
  al: Uint8Array
}
const parsedHeaders = new Map<string, ParsedHeader>()

/**
 * The fast-path header a token's encoded protected header decodes to, or `undefined`. The few
 * headers a deployment's tokens carry (one per secret) are remembered once authenticated, so a
 * session read skips decoding and parsing its header.
 */
function parsedHeader(encoded: string): ParsedHeader | undefined {
  const known = parsedHeaders.get(encoded)
  // Stryker disable next-line ConditionalExpression: `known` as false is equivalent, a memo: the header is parsed again to the same value; its other variants on this line are killed (hidden with it)
  if (known) return known
  let header: unknown
  // Stryker disable BlockStatement: the emptied catch is equivalent, it leaves header undefined, which the fast-header check below refuses the same way (the emptied try, killed, is hidden with it)
  try {
    header = JSON.parse(decoder.decode(base64urlDecode(encoded)))
  } catch {
    return undefined
  }
  // Stryker restore BlockStatement
  if (!isFastHeader(header)) return undefined
  const aad = encoder.encode(encoded)
  const parsed = { ...header, aad, al: aadLength(aad) }
  return parsed
}

/** Remembers a header once a token carrying it authenticated (so no forged header fills the map). */
// Stryker disable all: equivalent, a memo of authenticated headers only: remembering fewer, more or none changes speed and memory, never a token's outcome
function rememberHeader(encoded: string, header: ParsedHeader): void {
  if (parsedHeaders.size < 64 && !parsedHeaders.has(encoded)) parsedHeaders.set(encoded, header)
}

// Stryker restore all
/** Whether the fast path is available in this runtime. */
// Stryker disable next-line ConditionalExpression,EqualityOperator: false is equivalent (jose, same bytes); true is refused by test/mutation/webcrypto.test.ts
export const fastJwe = syncCrypto !== undefined

/**
 * Encrypts `plaintext` under the 64-byte `key`, with the protected header `{alg, enc, kid}` in
 * that order (as jose writes it).
 */
export function encryptCbcHs512(plaintext: string, key: Uint8Array, kid: string): string {
  const crypto = syncCrypto!
  const { protectedHeader, aad, al } = headerFor(kid)
  const iv = randomBytes(16)
  const cipher = crypto.createCipheriv('aes-256-cbc', key.subarray(32, 64), iv)
  const ciphertext = concatBytes(cipher.update(encoder.encode(plaintext)), cipher.final())
  const tag = tagOf(key.subarray(0, 32), aad, iv, ciphertext, al)
  return `${protectedHeader}..${base64urlEncode(iv)}.${base64urlEncode(ciphertext)}.${base64urlEncode(tag)}`
}

/** What the fast path made of a token. */
export type FastDecryption =
  | { handled: false }
  | { handled: true; kid: string | undefined; decrypt: (key: Uint8Array) => string }

/**
 * Parses a compact JWE; when the fast path applies, returns its `kid` and a function that
 * authenticates and decrypts it under a key.
 *
 * @throws {TypeError} from `decrypt` when the token is malformed or fails authentication.
 */
export function parseCbcHs512(jwe: string): FastDecryption {
  if (!fastJwe) return { handled: false }
  const parts = jwe.split('.')
  if (parts.length !== 5 || parts[1] !== '') return { handled: false }
  const header = parsedHeader(parts[0]!)
  if (!header) return { handled: false }
  return {
    handled: true,
    kid: header.kid,
    decrypt(key) {
      const fail = () => new TypeError('JWE decryption failed')
      // Stryker disable next-line ConditionalExpression: equivalent, a key of another length fails the tag check with the same error
      if (key.length !== 64) throw fail()
      let iv: Uint8Array, ciphertext: Uint8Array, tag: Uint8Array
      try {
        iv = base64urlDecode(parts[2]!)
        ciphertext = base64urlDecode(parts[3]!)
        tag = base64urlDecode(parts[4]!)
      } catch {
        throw fail()
      }
      // A tag of another length would make timingSafeEqual throw a RangeError instead.
      if (tag.length !== 32) throw fail()
      // Stryker disable next-line ConditionalExpression,LogicalOperator: dropping or weakening these checks is equivalent, an IV or ciphertext of another length fails the tag check, or AES-CBC (caught below), with the same error (the condition as true, killed, is hidden with them)
      if (iv.length !== 16 || ciphertext.length === 0 || ciphertext.length % 16 !== 0) throw fail()
      const expected = tagOf(key.subarray(0, 32), header.aad, iv, ciphertext, header.al)
      // Authenticate before decrypting: no padding oracle.
      if (!syncCrypto!.timingSafeEqual(expected, tag)) throw fail()
      rememberHeader(parts[0]!, header)
      try {
        const decipher = syncCrypto!.createDecipheriv('aes-256-cbc', key.subarray(32, 64), iv)
        const plaintext = concatBytes(decipher.update(ciphertext), decipher.final())
        return decoder.decode(plaintext)
      } catch {
        throw fail()
      }
    },
  }
}
