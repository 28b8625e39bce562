/**
 * Synchronous crypto where the runtime has it. Web Crypto is asynchronous, and on Node every call
 * hops to the thread pool: for a session cookie (HMAC + AES on a few hundred bytes) the hops cost
 * far more than the work. When `node:crypto` is reachable (`process.getBuiltinModule`, Node ≥ 20.16,
 * also Deno and Bun), the hot paths use it synchronously; elsewhere they fall back to Web Crypto
 * (through jose), with the same bytes either way.
 *
 * Contract (every module of `core/fast/`): the same bytes as the library it stands in for (jose,
 * oauth4webapi); where the runtime lacks what it needs, `undefined`, and the caller takes the
 * library's path. `test/core/fast/sync-crypto.test.ts` holds the comparison.
 *
 * @module
 */
import * as joseBase64url from 'jose/base64url'

/** The part of `node:crypto` used here (declared locally: the core compiles without Node types). */
export interface SyncCrypto {
  createHmac(algorithm: string, key: Uint8Array): { update(data: Uint8Array | string): unknown; digest(): Uint8Array }
  createHash(algorithm: string): { update(data: string): unknown; digest(encoding: 'hex'): string }
  /** One-shot digest (Node ≥ 20.12): cheaper than a Hash object for short inputs. */
  hash?(algorithm: string, data: string, encoding: 'hex' | 'base64url'): string
  /** The same one-shot digest over bytes, as bytes (`'buffer'`). */
  hash?(algorithm: string, data: Uint8Array, encoding: 'buffer'): Uint8Array
  createCipheriv(algorithm: string, key: Uint8Array, iv: Uint8Array | null): CipherLike
  createDecipheriv(algorithm: string, key: Uint8Array, iv: Uint8Array | null): CipherLike
  timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean
  randomFillSync(buffer: Uint8Array): Uint8Array
  /** A public key from a JWK (`format: 'jwk'`). */
  createPublicKey?(input: { key: object; format: 'jwk' }): object
  /** One-shot signature verification (RSA PKCS#1 v1.5 and PSS, ECDSA, Ed25519). */
  verify?(
    algorithm: string | null,
    data: Uint8Array,
    key: { key: object; padding?: number; saltLength?: number; dsaEncoding?: 'ieee-p1363' },
    signature: Uint8Array,
  ): boolean
}

/** The part of `node:buffer` used here. */
interface BufferModule {
  Buffer: {
    from(data: ArrayBufferLike, byteOffset: number, length: number): { toString(encoding: 'base64url'): string }
    from(data: string, encoding: 'base64url'): Uint8Array
  }
}

interface CipherLike {
  update(data: Uint8Array): Uint8Array
  final(): Uint8Array
  setAutoPadding?(padding: boolean): unknown
  /** AEAD modes (AES-GCM). */
  setAAD?(data: Uint8Array): unknown
  getAuthTag?(): Uint8Array
  setAuthTag?(tag: Uint8Array): unknown
}

function load<T>(id: string): T | undefined {
  try {
    const process = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process
    return process?.getBuiltinModule?.(id) as T | undefined
  } catch {
    return undefined
  }
}

/** `node:crypto`, when the runtime offers it synchronously. */
export const syncCrypto: SyncCrypto | undefined = load<SyncCrypto>('node:crypto')

const nodeBuffer = load<BufferModule>('node:buffer')?.Buffer

/** Base64url without padding: Node's native codec where available, jose's otherwise. */
export const base64urlEncode: (bytes: Uint8Array) => string = nodeBuffer
  ? (bytes) => nodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url')
  : (bytes) => joseBase64url.encode(bytes)

/** Decodes base64url (lenient about padding, as jose is not: callers check lengths). */
export const base64urlDecode: (text: string) => Uint8Array = nodeBuffer
  ? (text) => {
      // Node's decoder skips characters outside the alphabet; refuse them as jose does.
      if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new TypeError('invalid base64url')
      return nodeBuffer.from(text, 'base64url')
    }
  : (text) => joseBase64url.decode(text)

const POOL_SIZE = 4096
let pool: Uint8Array | undefined
let poolOffset = POOL_SIZE

/**
 * `size` random bytes from the system CSPRNG. Small requests are served from a pool refilled 4 KiB
 * at a time (each byte handed out once), as Node does for `randomUUID`: a call into the CSPRNG
 * costs far more than the 16 or 32 bytes a token needs.
 */
export function randomBytes(size: number): Uint8Array {
  if (size > 256) return globalThis.crypto.getRandomValues(new Uint8Array(size))
  if (poolOffset + size > POOL_SIZE) {
    pool = globalThis.crypto.getRandomValues(new Uint8Array(POOL_SIZE))
    poolOffset = 0
  }
  const bytes = pool!.slice(poolOffset, poolOffset + size)
  // Handed-out bytes are wiped from the pool, so no later reader can see them.
  pool!.fill(0, poolOffset, poolOffset + size)
  poolOffset += size
  return bytes
}

/** `a` followed by `b` in one new array (cipher output comes in two parts). */
export function concatBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length)
  out.set(a)
  out.set(b, a.length)
  return out
}

/**
 * The PKCE S256 challenge of a verifier (RFC 7636 §4.2: BASE64URL(SHA256(ASCII(verifier)))),
 * synchronously where the runtime allows; `undefined` otherwise (use oauth4webapi's).
 */
export function pkceChallenge(verifier: string): string | undefined {
  return syncCrypto?.hash?.('sha256', verifier, 'base64url')
}
