/**
 * The key-derivation functions behind every password check, each with a native implementation
 * where the runtime has one and `@noble/hashes` (plain JS, same bytes) where it does not.
 *
 * - argon2: `@node-rs/argon2`, loaded by a dynamic import inside a `try`, so an edge bundle that
 *   cannot carry a native module still works (workerd), through `@noble/hashes/argon2`.
 * - scrypt: `node:crypto` (`process.getBuiltinModule`, Node ≥ 20.16, Deno, Bun), else noble.
 * - PBKDF2: Web Crypto, present everywhere.
 *
 * @module
 */

/** Which argon2 implementation computes a digest: `'auto'` tries the native one first. */
export type Argon2Implementation = 'auto' | 'native' | 'portable'

/** The argon2 variants a stored hash may use (argon2d is not a password hash). */
export type Argon2Variant = 'argon2id' | 'argon2i'

/** Cost parameters of one argon2 computation: memory in KiB, iterations, lanes, digest bytes. */
export interface Argon2Computation {
  variant: Argon2Variant
  memoryCost: number
  timeCost: number
  parallelism: number
  outputLength: number
  /** 0x13 (19) or 0x10 (16). */
  version: number
}

/** The part of `@node-rs/argon2` used here (declared locally: its typings need Node's `Buffer`). */
interface NativeArgon2 {
  hashRaw(
    password: string | Uint8Array,
    options: {
      memoryCost: number
      timeCost: number
      parallelism: number
      outputLen: number
      algorithm: number
      version: number
      salt: Uint8Array
    },
  ): Promise<Uint8Array>
}

// `@node-rs/argon2`'s const enums, by value (isolated modules cannot read a const enum).
const NATIVE_ALGORITHM: Record<Argon2Variant, number> = { argon2i: 1, argon2id: 2 }
const NATIVE_VERSION: Record<number, number> = { 0x10: 0, 0x13: 1 }

// A variable, not a literal: bundlers for the edge must not try to pack the native module.
const NATIVE_ARGON2_MODULE = '@node-rs/argon2'
let nativeArgon2: Promise<NativeArgon2 | undefined> | undefined

/** The native argon2 module, or `undefined` where it cannot load (loaded once). */
export function loadNativeArgon2(): Promise<NativeArgon2 | undefined> {
  nativeArgon2 ??= (async () => {
    try {
      const module = (await import(/* @vite-ignore */ NATIVE_ARGON2_MODULE)) as Partial<NativeArgon2> & {
        default?: Partial<NativeArgon2>
      }
      const hashRaw = module.hashRaw ?? module.default?.hashRaw
      return typeof hashRaw === 'function' ? { hashRaw } : undefined
    } catch {
      return undefined
    }
  })()
  return nativeArgon2
}

/** Computes an argon2 digest with the chosen implementation. Throws on impossible parameters. */
export async function argon2Digest(
  computation: Argon2Computation,
  password: string,
  salt: Uint8Array,
  implementation: Argon2Implementation = 'auto',
): Promise<Uint8Array> {
  const native = implementation === 'portable' ? undefined : await loadNativeArgon2()
  if (implementation === 'native' && !native) throw new Error('the native argon2 module is not available')
  if (native) {
    const digest = await native.hashRaw(password, {
      memoryCost: computation.memoryCost,
      timeCost: computation.timeCost,
      parallelism: computation.parallelism,
      outputLen: computation.outputLength,
      algorithm: NATIVE_ALGORITHM[computation.variant],
      version: NATIVE_VERSION[computation.version] ?? 1,
      salt,
    })
    return new Uint8Array(digest.buffer, digest.byteOffset, digest.byteLength)
  }
  // Loaded on first use: where the native module runs, the plain-JS one is never needed.
  const { argon2idAsync, argon2iAsync } = await import('@noble/hashes/argon2.js')
  const derive = computation.variant === 'argon2id' ? argon2idAsync : argon2iAsync
  return derive(password, salt, {
    m: computation.memoryCost,
    t: computation.timeCost,
    p: computation.parallelism,
    dkLen: computation.outputLength,
    version: computation.version,
    maxmem: 2 ** 32 - 1,
  })
}

/** scrypt cost parameters: N (a power of two), r, p and the digest length in bytes. */
export interface ScryptComputation {
  N: number
  r: number
  p: number
  outputLength: number
}

/** The part of `node:crypto` used for scrypt. */
interface NodeScrypt {
  scrypt(
    password: Uint8Array,
    salt: Uint8Array,
    keylen: number,
    options: { N: number; r: number; p: number; maxmem: number },
    callback: (error: Error | null, key: Uint8Array) => void,
  ): void
}

function loadNodeScrypt(): NodeScrypt | undefined {
  try {
    const process = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process
    const module = process?.getBuiltinModule?.('node:crypto') as Partial<NodeScrypt> | undefined
    return typeof module?.scrypt === 'function' ? (module as NodeScrypt) : undefined
  } catch {
    return undefined
  }
}

const nodeScrypt = loadNodeScrypt()

/** Computes an scrypt digest (RFC 7914) of raw bytes. Throws on impossible parameters. */
export async function scryptDigest(
  computation: ScryptComputation,
  password: Uint8Array,
  salt: Uint8Array,
  implementation: 'auto' | 'portable' = 'auto',
): Promise<Uint8Array> {
  const { N, r, p, outputLength } = computation
  const maxmem = 128 * N * r * 2 + 1024 * 1024
  if (nodeScrypt && implementation === 'auto') {
    const key = await new Promise<Uint8Array>((resolve, reject) =>
      nodeScrypt.scrypt(password, salt, outputLength, { N, r, p, maxmem }, (error, key) =>
        error ? reject(error) : resolve(key),
      ),
    )
    return new Uint8Array(key.buffer, key.byteOffset, key.byteLength)
  }
  const { scryptAsync } = await import('@noble/hashes/scrypt.js')
  return scryptAsync(password, salt, { N, r, p, dkLen: outputLength, maxmem })
}

/** PBKDF2-HMAC (RFC 8018) through Web Crypto. */
export async function pbkdf2Digest(
  hash: 'SHA-256' | 'SHA-512' | 'SHA-1',
  password: Uint8Array<ArrayBuffer>,
  salt: Uint8Array<ArrayBuffer>,
  iterations: number,
  outputLength: number,
): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey('raw', password, 'PBKDF2', false, ['deriveBits'])
  const bits = await crypto.subtle.deriveBits({ name: 'PBKDF2', hash, salt, iterations }, key, outputLength * 8)
  return new Uint8Array(bits)
}
