/**
 * The known-device mark at the module level: only a mark made for this user under one of the
 * configured secrets names a device; another user's mark, an edited one and junk name none.
 */
import { describe, expect, it } from 'vitest'
import { DEVICE_COOKIE, DEVICE_MAX_AGE, deviceCookie, deviceMark, knownDevice } from '../../core/second-factor/device.js'

const SECRET = 'a-secret-that-is-long-enough-for-the-device-mark-0123'
const OLD = 'an-older-secret-that-is-long-enough-for-the-mark-4567'

describe('the known-device mark', () => {
  it('names its device for its own user, under the current or an older secret', async () => {
    const mark = await deviceMark('alice', [SECRET])
    const device = mark.split('.')[0]
    expect(await knownDevice(mark, 'alice', [SECRET])).toBe(device)
    const older = await deviceMark('alice', [OLD], device)
    expect(await knownDevice(older, 'alice', [SECRET, OLD])).toBe(device)
    expect(await knownDevice(older, 'alice', [SECRET])).toBeUndefined()
  })

  it("names no device for another user's mark, an edited mark or junk", async () => {
    const mark = await deviceMark('mallory', [SECRET])
    expect(await knownDevice(mark, 'alice', [SECRET])).toBeUndefined()
    const [device, hash] = mark.split('.') as [string, string]
    const edited = `${device.replace(/^./, (c) => (c === 'a' ? 'b' : 'a'))}.${hash}`
    expect(await knownDevice(edited, 'mallory', [SECRET])).toBeUndefined()
    for (const junk of [undefined, '', 'x', `${device}.`, `${device}.${hash}0`, `${device.toUpperCase()}.${hash}`]) {
      expect(await knownDevice(junk, 'mallory', [SECRET])).toBeUndefined()
    }
  })

  it('keeps a new device id apart from the one it is given', async () => {
    const a = (await deviceMark('alice', [SECRET])).split('.')[0]
    const b = (await deviceMark('alice', [SECRET])).split('.')[0]
    expect(a).not.toBe(b)
    expect(a).toMatch(/^[0-9a-f]{32}$/)
    expect((await deviceMark('alice', [SECRET], a)).split('.')[0]).toBe(a)
  })

  it('follows the session cookie, prefixed as it is, for 180 days', () => {
    const secure = deviceCookie({ name: '__Secure-authjs.session-token', options: { httpOnly: true, secure: true, sameSite: 'lax', path: '/' } })
    expect(secure).toEqual({ name: `__Secure-${DEVICE_COOKIE}`, options: { httpOnly: true, secure: true, sameSite: 'lax', path: '/', maxAge: DEVICE_MAX_AGE } })
    expect(DEVICE_MAX_AGE).toBe(180 * 24 * 3600)
    expect(deviceCookie({ name: 'authjs.session-token', options: { path: '/' } }).name).toBe(DEVICE_COOKIE)
  })
})
