/**
 * The comparison both native integration paths (Express, Fastify) are held to: each answers every
 * request as the web-`Request` path it replaced does, status, headers and body alike. Time and
 * randomness are pinned so that tokens and dates repeat between the two answers.
 */
import { expect, it, vi } from 'vitest'

/** A named request; built when its test runs, after the suite's cookies and tokens exist. */
export type NativePathCase<Sent> = [name: string, request: () => Sent]

/** The two apps under comparison, each as the answer a client sees of a request. */
export interface NativePathAnswers<Sent> {
  native: (sent: Sent) => Promise<unknown>
  web: (sent: Sent) => Promise<unknown>
}

/**
 * Pins the clock and every random source the handler reads, so that CSRF tokens, IVs, `jti` and
 * expiry dates repeat exactly; undone by {@link unpinClockAndRandomness}.
 */
export function pinClockAndRandomness(): void {
  vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-05-01T12:00:00.000Z') })
  // Typed as Crypto's own method: Next.js's declarations add an overload of it to the global type.
  vi.spyOn(globalThis.crypto, 'getRandomValues').mockImplementation(((array: ArrayBufferView) => {
    new Uint8Array(array.buffer, array.byteOffset, array.byteLength).fill(7)
    return array
  }) as typeof globalThis.crypto.getRandomValues)
  vi.spyOn(globalThis.crypto, 'randomUUID').mockReturnValue('00000000-0000-4000-8000-000000000000')
}

/** Gives back the real clock and random sources. */
export function unpinClockAndRandomness(): void {
  vi.useRealTimers()
  vi.restoreAllMocks()
}

/**
 * One test per case (`for <name>`): the native path's answer equals the web path's. Each case's
 * request is sent to the native app first, then to the web one.
 */
export function answersAsTheWebPath<Sent>(cases: readonly NativePathCase<Sent>[], answers: NativePathAnswers<Sent>): void {
  it.each(cases)('for %s', async (_name, request) => {
    const sent = request()
    const [ours, reference] = [await answers.native(sent), await answers.web(sent)]
    expect(ours).toEqual(reference)
  })
}
