/**
 * Synchronous crypto where the runtime has it. Web Crypto is asynchronous, and on Node every call
 * hops to the thread pool: for a session cookie (HMAC + AES on a few hundred bytes) the hops cost
 * far more than the work. When `node:crypto` is reachable (`process.getBuiltinModule`, Node ≥ 20.16,
 * also Deno and Bun), the hot paths use it synchronously; elsewhere they fall back to Web Crypto
 * (through jose), with the same bytes either way.
 *
 * @module
 */

/** The part of `node:crypto` used here (declared locally: the core compiles without Node types). */
export interface SyncCrypto {
  createHmac(algorithm: string, key: Uint8Array): { update(data: Uint8Array | string): unknown; digest(): Uint8Array }
  createHash(algorithm: string): { update(data: string): unknown; digest(encoding: 'hex'): string }
  createCipheriv(algorithm: string, key: Uint8Array, iv: Uint8Array): CipherLike
  createDecipheriv(algorithm: string, key: Uint8Array, iv: Uint8Array): CipherLike
  timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean
}

interface CipherLike {
  update(data: Uint8Array): Uint8Array
  final(): Uint8Array
}

function load(): SyncCrypto | undefined {
  try {
    const process = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process
    return process?.getBuiltinModule?.('node:crypto') as SyncCrypto | undefined
  } catch {
    return undefined
  }
}

/** `node:crypto`, when the runtime offers it synchronously. */
export const syncCrypto: SyncCrypto | undefined = load()
