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
// Stryker disable next-line StringLiteral: eq#fast-jwe-cbc-1
const decoder = new TextDecoder('utf-8', { fatal: true })

/** A header the fast path handles: exactly alg, enc and kid. */
interface FastHeader {
  alg: 'dir'
  enc: 'A256CBC-HS512'
  kid?: string
}

function isFastHeader(header: unknown): header is FastHeader {
  // Stryker disable next-line ConditionalExpression: eq#fast-jwe-cbc-2
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
  // Stryker disable next-line ArithmeticOperator: eq#fast-jwe-cbc-3
  new DataView(al.buffer).setUint32(0, Math.floor(bits / 2 ** 32))
  return al
}

/** SHA-512's block size: HMAC pads its key to it (RFC 2104). */
const HMAC_BLOCK = 128

/**
 * What every token under one 64-byte key needs, prepared once per key: HMAC-SHA-512's padded MAC
 * key (so that the tag is two one-shot digests, RFC 2104, instead of an HMAC object per token) and
 * AES-256 without chaining or padding under the encryption key (CBC's block decryption, chained
 * here), instead of a key schedule and a decipher object per token.
 */
interface KeyedCbcHs512 {
  /** The MAC key XOR ipad, then room for the message: copied into each inner digest's input. */
  innerPad: Uint8Array
  /** The MAC key XOR opad followed by room for the inner digest (reused: every call is synchronous). */
  outer: Uint8Array
  /** AES-256-ECB without padding; `null` where the runtime has none (the CBC decipher is used). */
  blocks?: CipherLike | null
}
interface CipherLike {
  update(data: Uint8Array): Uint8Array
}
const keyed = new WeakMap<Uint8Array, KeyedCbcHs512>()

function keyedOf(key: Uint8Array): KeyedCbcHs512 {
  let state = keyed.get(key)
  if (!state) {
    const innerPad = new Uint8Array(HMAC_BLOCK).fill(0x36)
    const outer = new Uint8Array(HMAC_BLOCK + 64).fill(0x5c, 0, HMAC_BLOCK)
    for (let i = 0; i < 32; i++) {
      innerPad[i]! ^= key[i]!
      outer[i]! ^= key[i]!
    }
    state = { innerPad, outer }
    keyed.set(key, state)
  }
  return state
}

/** HMAC-SHA-512 over `parts` by two one-shot digests under a prepared key. */
function hmacByDigests(state: KeyedCbcHs512, parts: readonly Uint8Array[]): Uint8Array {
  let length = HMAC_BLOCK
  for (const part of parts) length += part.length
  const inner = new Uint8Array(length)
  inner.set(state.innerPad)
  let at = HMAC_BLOCK
  for (const part of parts) {
    inner.set(part, at)
    at += part.length
  }
  state.outer.set(syncCrypto!.hash!('sha512', inner, 'buffer'), HMAC_BLOCK)
  return syncCrypto!.hash!('sha512', state.outer, 'buffer')
}

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((byte, i) => byte === b[i])

let digestsAgree: boolean | undefined
/**
 * Whether this runtime's one-shot digest takes and gives bytes and agrees with its HMAC (checked
 * once, on a fixed input): otherwise every tag is an HMAC object's.
 */
function canHmacByDigests(): boolean {
  if (digestsAgree === undefined) {
    try {
      const key = new Uint8Array(64).fill(0x0b)
      const data = encoder.encode('authchart HMAC-SHA-512 check')
      const hmac = syncCrypto!.createHmac('sha512', key.subarray(0, 32))
      hmac.update(data)
      digestsAgree = typeof syncCrypto!.hash === 'function' && sameBytes(hmacByDigests(keyedOf(key), [data]), hmac.digest())
    } catch {
      digestsAgree = false
    }
  }
  return digestsAgree
}

/** The JWE's authentication tag: HMAC-SHA-512 over AAD, IV, ciphertext and AL, its first 32 bytes. */
function tagOf(key: Uint8Array, aad: Uint8Array, iv: Uint8Array, ciphertext: Uint8Array, al: Uint8Array): Uint8Array {
  if (canHmacByDigests()) return hmacByDigests(keyedOf(key), [aad, iv, ciphertext, al]).subarray(0, 32)
  const hmac = syncCrypto!.createHmac('sha512', key.subarray(0, 32))
  hmac.update(aad)
  hmac.update(iv)
  hmac.update(ciphertext)
  hmac.update(al)
  return hmac.digest().subarray(0, 32)
}

/** AES-256-ECB without padding under the key's encryption half, or `null` where the runtime has none. */
function blocksOf(key: Uint8Array): CipherLike | null {
  const state = keyedOf(key)
  if (state.blocks === undefined) {
    try {
      const blocks = syncCrypto!.createDecipheriv('aes-256-ecb', key.subarray(32, 64), null)
      blocks.setAutoPadding!(false)
      state.blocks = blocks
    } catch {
      state.blocks = null
    }
  }
  return state.blocks
}

/**
 * CBC decryption (NIST SP 800-38A §6.2) over block decryptions: each block's decryption XOR the
 * ciphertext block before it (the IV for the first), then the PKCS#7 padding checked and removed
 * as the CBC decipher's `final()` does. `undefined` for bad padding.
 */
function cbcOverBlocks(blocks: CipherLike, iv: Uint8Array, ciphertext: Uint8Array): Uint8Array | undefined {
  const plain = blocks.update(ciphertext)
  if (plain.length !== ciphertext.length) return undefined
  for (let i = 0; i < 16; i++) plain[i]! ^= iv[i]!
  for (let i = 16; i < plain.length; i++) plain[i]! ^= ciphertext[i - 16]!
  const pad = plain[plain.length - 1]!
  if (pad < 1 || pad > 16) return undefined
  for (let i = plain.length - pad; i < plain.length; i++) if (plain[i] !== pad) return undefined
  return plain.subarray(0, plain.length - pad)
}

let blocksAgree: boolean | undefined
/** Whether CBC over this runtime's ECB blocks opens what its CBC cipher seals (checked once). */
function canDecryptOverBlocks(): boolean {
  if (blocksAgree === undefined) {
    try {
      const key = new Uint8Array(64).fill(0x2a)
      const iv = new Uint8Array(16).fill(0x11)
      const plaintext = encoder.encode('authchart AES-256-CBC check, over more than one block')
      const cipher = syncCrypto!.createCipheriv('aes-256-cbc', key.subarray(32, 64), iv)
      const ciphertext = concatBytes(cipher.update(plaintext), cipher.final())
      const blocks = syncCrypto!.createDecipheriv('aes-256-ecb', key.subarray(32, 64), null)
      blocks.setAutoPadding!(false)
      const opened = cbcOverBlocks(blocks, iv, ciphertext)
      blocksAgree = opened !== undefined && sameBytes(opened, plaintext)
    } catch {
      blocksAgree = false
    }
  }
  return blocksAgree
}

/** AES-256-CBC decryption under the key's second half: `undefined` for bad padding. */
function decryptCbc(key: Uint8Array, iv: Uint8Array, ciphertext: Uint8Array): Uint8Array | undefined {
  const blocks = canDecryptOverBlocks() ? blocksOf(key) : null
  if (blocks) return cbcOverBlocks(blocks, iv, ciphertext)
  try {
    const decipher = syncCrypto!.createDecipheriv('aes-256-cbc', key.subarray(32, 64), iv)
    return concatBytes(decipher.update(ciphertext), decipher.final())
  } catch {
    return undefined
  }
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
  // Stryker disable next-line ConditionalExpression: eq#fast-jwe-cbc-4
  if (!header) {
    const protectedHeader = base64urlEncode(encoder.encode(JSON.stringify({ alg: 'dir', enc: 'A256CBC-HS512', kid })))
    const aad = encoder.encode(protectedHeader)
    header = { protectedHeader, aad, al: aadLength(aad) }
    // Stryker disable next-line ConditionalExpression,EqualityOperator: eq#fast-jwe-cbc-5
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
  // Stryker disable next-line ConditionalExpression: eq#fast-jwe-cbc-6
  if (known) return known
  let header: unknown
  // Stryker disable BlockStatement: eq#fast-jwe-cbc-7
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
// Stryker disable all: eq#fast-jwe-cbc-8
function rememberHeader(encoded: string, header: ParsedHeader): void {
  if (parsedHeaders.size < 64 && !parsedHeaders.has(encoded)) parsedHeaders.set(encoded, header)
}

// Stryker restore all
/** Whether the fast path is available in this runtime. */
// Stryker disable next-line ConditionalExpression,EqualityOperator: eq#fast-jwe-cbc-9
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
  const tag = tagOf(key, aad, iv, ciphertext, al)
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
      // Stryker disable next-line ConditionalExpression: eq#fast-jwe-cbc-10
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
      // Stryker disable next-line ConditionalExpression,LogicalOperator: eq#fast-jwe-cbc-11
      if (iv.length !== 16 || ciphertext.length === 0 || ciphertext.length % 16 !== 0) throw fail()
      const expected = tagOf(key, header.aad, iv, ciphertext, header.al)
      // Authenticate before decrypting: no padding oracle.
      if (!syncCrypto!.timingSafeEqual(expected, tag)) throw fail()
      rememberHeader(parts[0]!, header)
      const plaintext = decryptCbc(key, iv, ciphertext)
      if (plaintext === undefined) throw fail()
      try {
        return decoder.decode(plaintext)
      } catch {
        throw fail()
      }
    },
  }
}
