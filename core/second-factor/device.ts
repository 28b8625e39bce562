/**
 * The known-device mark: a cookie a browser receives when it completes a sign-in of a user with a
 * second factor, naming a random device id bound to that user by a keyed hash. Its codes are then
 * counted on their own (`checkCode`'s `client.device`), so someone who knows the password and
 * spends the user's codes from elsewhere does not lock this browser out. Loaded by the sign-in
 * completion only when a code is checked.
 *
 * @module
 */
import type { CookieOption } from '../cookies.js'
import { hkdfSha256, randomHex, timingSafeEqual, toHex } from '../crypto.js'

/** The device cookie's name, without a prefix. */
export const DEVICE_COOKIE = 'authchart.second-factor-device'
/** How long a browser stays a known device after its last sign-in with a second factor (180 days). */
export const DEVICE_MAX_AGE = 180 * 24 * 60 * 60

/**
 * The device cookie: beside the session token and following its options (`__Secure-`-prefixed
 * when it is), kept for {@link DEVICE_MAX_AGE}.
 */
export function deviceCookie(sessionToken: CookieOption): CookieOption {
  const prefix = sessionToken.name.startsWith('__Secure-') || sessionToken.name.startsWith('__Host-') ? '__Secure-' : ''
  return { name: `${prefix}${DEVICE_COOKIE}`, options: { ...sessionToken.options, maxAge: DEVICE_MAX_AGE } }
}

const encoder = new TextEncoder()

async function markOf(userId: string, device: string, secret: string): Promise<string> {
  const raw = await hkdfSha256(secret, 'authchart.device-mark', 'authchart known device', 32)
  const key = await crypto.subtle.importKey('raw', raw as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  return toHex(new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(`${userId}\u0000${device}`))))
}

/** A device cookie value for `userId`: the device id (new unless given) and its keyed hash. */
export async function deviceMark(userId: string, secrets: readonly string[], device = randomHex(16)): Promise<string> {
  return `${device}.${await markOf(userId, device, secrets[0]!)}`
}

/**
 * The device id a cookie value names, when it was made for `userId` under one of `secrets`;
 * `undefined` for another user's mark, a forged one or none.
 */
export async function knownDevice(value: string | undefined, userId: string, secrets: readonly string[]): Promise<string | undefined> {
  const match = /^([0-9a-f]{32})\.([0-9a-f]{64})$/.exec(value ?? '')
  if (!match) return undefined
  const [, device, mark] = match as unknown as [string, string, string]
  for (const secret of secrets) {
    if (timingSafeEqual(await markOf(userId, device, secret), mark)) return device
  }
  return undefined
}
