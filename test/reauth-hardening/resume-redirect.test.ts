/**
 * Issue 48, item 2, from the attacker's side over HTTP: a re-authentication started with a
 * crafted `callbackUrl` (or a fetch whose `Referer` is crafted) resumes, after the right password,
 * on this site: the resume goes through the sign-in's URL rule, and no `Location` starts with
 * `//` or `/\` (which a browser follows to another host).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Client, featureConfig, ORIGIN } from '../fixtures/http.js'
import { HTML, later, OFF_SITE_TARGETS, post, staysOnSite } from './fixture.js'

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})

async function staleAlice() {
  const config = featureConfig()
  const client = new Client(config)
  await client.signIn({ username: 'alice', password: 'wonderland' })
  later(11)
  return { config, client }
}

const password = { event: 'reauth.password', username: 'alice', password: 'wonderland' }

describe('the resume after re-authentication stays on the site', () => {
  for (const target of OFF_SITE_TARGETS) {
    it(`for an application's route with callbackUrl=${JSON.stringify(target)}`, async () => {
      const { client } = await staleAlice()
      const asked = await client.send({ path: `/reauthenticate?${new URLSearchParams({ callbackUrl: target })}`, headers: HTML })
      if (asked.status >= 400) return // refused outright: nothing to resume
      expect(asked.headers.get('location')).toBe(`${ORIGIN}/auth/step/reauthenticate`)
      const resumed = await post(client, '/step/reauthenticate', password)
      expect(resumed.status).toBe(302)
      expect(staysOnSite(resumed.headers.get('location')), String(resumed.headers.get('location'))).toBe(true)
    })

    it(`for a fetch whose Referer is ${JSON.stringify(target)}`, async () => {
      const { client } = await staleAlice()
      let referer: string
      try {
        referer = new URL(target, ORIGIN).href
      } catch {
        return
      }
      const fetched = await client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() }, headers: { accept: 'application/json', referer } })
      expect(fetched.status).toBe(401)
      const resumed = await post(client, '/step/reauthenticate', password)
      expect(resumed.status).toBe(302)
      expect(staysOnSite(resumed.headers.get('location')), String(resumed.headers.get('location'))).toBe(true)
    })
  }
})

describe('resumeTarget (the module rule)', () => {
  it('keeps a URL on our origin, absolute when its path would read as another host, and nothing else', async () => {
    const { resumeTarget } = await import('../../core/flows/reauthenticate/gate.js')
    expect(resumeTarget(`${ORIGIN}/settings?tab=1`, ORIGIN)).toBe('/settings?tab=1')
    expect(resumeTarget('/settings', ORIGIN)).toBe('/settings')
    expect(resumeTarget(`${ORIGIN}//evil.example/phish`, ORIGIN)).toBe(`${ORIGIN}//evil.example/phish`)
    expect(resumeTarget(`${ORIGIN}/\\evil.example/phish`, ORIGIN)).toBe(`${ORIGIN}//evil.example/phish`)
    expect(resumeTarget('//evil.example/phish', ORIGIN)).toBeUndefined()
    expect(resumeTarget('/\\evil.example/phish', ORIGIN)).toBeUndefined()
    expect(resumeTarget('https://evil.example/', ORIGIN)).toBeUndefined()
    expect(resumeTarget('javascript:alert(1)', ORIGIN)).toBeUndefined()
    expect(resumeTarget(null, ORIGIN)).toBeUndefined()
    for (const target of OFF_SITE_TARGETS) {
      const kept = resumeTarget(target, ORIGIN)
      if (kept !== undefined) expect(staysOnSite(kept), `${JSON.stringify(target)} → ${kept}`).toBe(true)
    }
  })
})
