/**
 * Config validation: once per config object, and only the options the config has. A bad value in
 * a present option is refused with the message the whole schema gives.
 */
import { create } from 'superstruct'
import { describe, expect, it, vi } from 'vitest'
import { assertConfig, resolveConfig } from '../../core/config/resolve-config.js'
import { AuthConfigStruct } from '../../core/config/structs.js'
import { OPTION_DEFAULTS, validateConfig } from '../../core/config/validate.js'
import { credentialsProvider, SECRET } from '../fixtures/http.js'

/** A config whose every option read is recorded (by a proxy: validation reads it like any code). */
function recording(config: Record<string, unknown>) {
  const reads: string[] = []
  const proxy = new Proxy(config, {
    get(target, key, receiver) {
      if (typeof key === 'string') reads.push(key)
      return Reflect.get(target, key, receiver)
    },
  })
  return { proxy, reads }
}

const credentialsOnly = () => ({ secret: SECRET, trustHost: true, providers: [credentialsProvider()] })

describe('validating a config once per config object', () => {
  it('gives the same validated config for the same object, reading its options only the first time', () => {
    const { proxy, reads } = recording(credentialsOnly())
    const first = validateConfig(proxy)
    const readOnce = reads.length
    expect(readOnce).toBeGreaterThan(0)
    expect(validateConfig(proxy)).toBe(first)
    expect(reads).toHaveLength(readOnce)
  })

  it('validates another object again, even with the same options', () => {
    const config = credentialsOnly()
    const copy = { ...config }
    expect(validateConfig(copy)).not.toBe(validateConfig(config))
    expect(validateConfig(copy)).toEqual(validateConfig(config))
  })
})

describe('validating only the options present', () => {
  it('runs no struct of an option the config leaves out (the whole schema runs every one)', () => {
    const schema = AuthConfigStruct.schema as unknown as Record<string, { validator: (...args: unknown[]) => unknown }>
    const absent = ['stepUp', 'rateLimit', 'cookies', 'session', 'audit', 'telemetry', 'inspector'] as const
    const spies = Object.fromEntries([...absent, 'providers'].map((name) => [name, vi.spyOn(schema[name]!, 'validator')]))
    try {
      validateConfig(credentialsOnly())
      for (const name of absent) expect(spies[name], name).not.toHaveBeenCalled()
      expect(spies.providers).toHaveBeenCalled()
      // The check can fail: the whole schema runs the struct of every option, present or not.
      create(credentialsOnly(), AuthConfigStruct)
      for (const name of absent) expect(spies[name], name).toHaveBeenCalled()
    } finally {
      vi.restoreAllMocks()
    }
  })

  it('gives what the whole schema gives, defaults included', () => {
    const configs = [
      credentialsOnly(),
      { ...credentialsOnly(), session: { maxAge: 60 }, theme: { brandColor: '#346df1' }, pages: { signIn: '/login' } },
      { ...credentialsOnly(), experimental: {}, debug: true, basePath: '/api/auth', redirectProxyUrl: undefined },
    ]
    for (const config of configs) expect(validateConfig(config)).toEqual(create(config, AuthConfigStruct))
  })

  it("knows each option's default: exactly what its struct gives for a missing option, and none for the others", () => {
    const schema = AuthConfigStruct.schema as unknown as Record<string, Parameters<typeof create>[1]>
    const given = Object.fromEntries(
      Object.keys(schema)
        .map((name) => [name, create(undefined, schema[name]!)] as const)
        .filter(([, value]) => value !== undefined),
    )
    expect(OPTION_DEFAULTS).toEqual(given)
  })

  it("does not share a default between configs in a way one could change for another", () => {
    const validated = validateConfig(credentialsOnly()) as unknown as { theme: Record<string, unknown>; session: Record<string, unknown> }
    expect(() => {
      validated.theme.logo = 'https://evil.example/logo.png'
    }).toThrow(TypeError)
    expect((validateConfig(credentialsOnly()) as unknown as { theme: { logo: string } }).theme.logo).toBe('')
  })
})

describe('a bad value in a present option', () => {
  const refusal = (config: Record<string, unknown>) => {
    const resolution = resolveConfig(config as never)
    expect(resolution.ok).toBe(false)
    return (resolution as { error: Error & { path?: unknown } }).error
  }

  it('is refused with the message of the whole schema: a path, a short secret, an unknown option, a bad number', () => {
    expect(refusal({ ...credentialsOnly(), basePath: 'auth' }).message).toBe('config.basePath: must be a path starting with "/" (for example "/auth")')
    expect(refusal({ ...credentialsOnly(), secret: 'short' }).message).toMatch(/^config\.secret: .*at least 32 characters long/)
    expect(refusal({ ...credentialsOnly(), sesion: {} }).message).toBe('config.sesion: unknown option')
    expect(refusal({ ...credentialsOnly(), session: { maxAge: -1 } }).message).toBe('config.session.maxAge: Expected a integer greater than or equal to 0 but received `-1`')
    expect(refusal({ ...credentialsOnly(), trustHost: 'yes' }).message).toBe(
      'config.trustHost: must be true, false or a list of hosts ("app.example.com") or origins',
    )
  })

  it('is refused after a good resolution of the same options in another object (the cache is per object)', () => {
    const good = credentialsOnly()
    expect(assertConfig(good).basePath).toBe('/auth')
    expect(refusal({ ...good, basePath: 'auth' }).message).toMatch(/^config\.basePath: /)
  })
})
