/**
 * The allowlist of origins a redirect proxy may forward to (issue 11, item 1): its entry syntax,
 * its refusal of entries that would reach hosts the owner does not control, and its environment
 * variable. The attack itself, over HTTP, is in redirect-proxy-takeover.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { compileOriginPattern } from '../../core/config/origins.js'
import { resolveConfig } from '../../core/config/resolve-config.js'
import { setEnvDefaults } from '../../core/env.js'
import type { AuthConfig } from '../../core/types.js'
import { SECRET } from '../fixtures/http.js'

describe('the redirect-proxy allowlist', () => {
  it('accepts exact origins and a wildcard inside the leftmost label only', () => {
    const compiled = (entry: string) => {
      const pattern = compileOriginPattern(entry)
      if (typeof pattern === 'string') throw new Error(pattern)
      return pattern
    }
    const exact = compiled('HTTPS://App.Example.com:443')
    expect(exact.source).toBe('https://app.example.com')
    expect(exact.test('https://app.example.com')).toBe(true)
    expect(exact.test('https://app.example.com.evil.test')).toBe(false)
    expect(compiled('https://app.example.com/').source).toBe('https://app.example.com')
    const wildcard = compiled('https://app-*.preview.example.com')
    expect(wildcard.test('https://app-pr-42.preview.example.com')).toBe(true)
    expect(wildcard.test('https://app-.preview.example.com')).toBe(false)
    expect(wildcard.test('https://app-x.evil.test.preview.example.com')).toBe(false)
    expect(wildcard.test('https://app-a.b.preview.example.com')).toBe(false)
    expect(wildcard.test('http://app-x.preview.example.com')).toBe(false)
    expect(wildcard.test('https://evil.test/app-x.preview.example.com')).toBe(false)
  })

  it.each([
    ['https://*.com', /leftmost label/],
    ['https://app.example.com/auth', /origin only/],
    ['https://user@app.example.com', /origin only/],
    ['https://a.*.example.com', /leftmost label/],
    ['https://*-*.example.com', /at most one/],
    ['javascript:alert(1)', /http\(s\)/],
    ['not a url', /must be an origin/],
  ])('refuses %s at boot', (entry, reason) => {
    expect(compileOriginPattern(entry)).toMatch(reason)
    const resolution = resolveConfig({ secret: SECRET, providers: [], redirectProxyOrigins: [entry] } as AuthConfig)
    expect(resolution.ok).toBe(false)
    expect(!resolution.ok && resolution.error.message).toMatch(/^config\.redirectProxyOrigins\.0: /)
  })

  it('is read from AUTH_REDIRECT_PROXY_ORIGINS, comma-separated, unless the config sets it', () => {
    const config = { providers: [] } as unknown as AuthConfig
    setEnvDefaults({ AUTH_REDIRECT_PROXY_ORIGINS: 'https://a.example.com, https://b.example.com,' }, config)
    expect(config.redirectProxyOrigins).toEqual(['https://a.example.com', 'https://b.example.com'])
    const own = { providers: [], redirectProxyOrigins: ['https://c.example.com'] } as unknown as AuthConfig
    setEnvDefaults({ AUTH_REDIRECT_PROXY_ORIGINS: 'https://a.example.com' }, own)
    expect(own.redirectProxyOrigins).toEqual(['https://c.example.com'])
  })
})
