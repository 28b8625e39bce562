import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter } from '../../adapters/memory.js'
import { decode } from '../../core/jwt.js'
import { Client, ORIGIN, SECRET, featureConfig } from '../fixtures/http.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'
const FLOW_COOKIE = '__Secure-authjs.flow.reauthenticate'
const HTML = { accept: 'text/html' }
const ELEVEN_MINUTES = 11 * 60 * 1000

/** Signs alice in, then lets her proof grow old. */
async function staleClient(overrides = {}) {
  const config = featureConfig(overrides)
  const client = new Client(config)
  await client.signIn({ username: 'alice', password: 'wonderland' })
  vi.setSystemTime(Date.now() + ELEVEN_MINUTES)
  return { config, client }
}

async function askToEnrol(client: Client, headers: Record<string, string> = HTML) {
  return client.send({ path: '/two-factor', body: { csrfToken: await client.csrfToken() }, headers })
}

async function prove(client: Client, fields: Record<string, string>) {
  return client.send({ path: '/step/reauthenticate', body: { ...fields, csrfToken: await client.csrfToken() }, headers: HTML })
}

const fvaOf = async (client: Client) =>
  ((await decode({ token: client.jar.get(SESSION_COOKIE)!, secret: SECRET, salt: SESSION_COOKIE })) as { fva?: Record<string, number> }).fva

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})

for (const strategy of ['jwt', 'database'] as const) {
  const overrides = () =>
    ({ adapter: MemoryAdapter(createMemoryStore()), session: { strategy } })

  describe(`step-up with the password (${strategy} sessions)`, () => {
    it('asks a stale session before turning on two-step verification, and resumes the action once proven', async () => {
      const { client } = await staleClient(overrides())
      const asked = await askToEnrol(client)
      expect(asked.status).toBe(303)
      expect(asked.headers.get('location')).toBe(`${ORIGIN}/auth/step/reauthenticate`)
      // The action did not start: no enrolment flow was sealed.
      expect(client.jar.get('__Secure-authjs.flow.totp-enrolment')).toBeUndefined()

      const page = await client.send({ path: '/step/reauthenticate', headers: HTML })
      const html = await page.text()
      expect(html).toContain("Confirm it's you to turn on two-step verification")
      expect(html).toContain('name="password"')

      const sessionBefore = client.jar.get(SESSION_COOKIE)
      const resumed = await prove(client, { event: 'reauth.password', username: 'alice', password: 'wonderland' })
      expect(resumed.status).toBe(200)
      const resume = await resumed.text()
      expect(resume).toContain(`action="/auth/two-factor"`)
      expect(resume).not.toContain('wonderland')
      if (strategy === 'jwt') {
        expect(client.jar.get(SESSION_COOKIE)).not.toBe(sessionBefore)
        expect((await fvaOf(client))?.pwd).toBe(Math.floor(Date.now() / 1000))
      } else {
        // The same row, marked verified: the cookie does not change.
        expect(client.jar.get(SESSION_COOKIE)).toBe(sessionBefore)
      }

      const enrol = await askToEnrol(client)
      expect(enrol.headers.get('location')).toBe(`${ORIGIN}/auth/step/totp-enrolment`)
    })

    it('leaves the action undone after a wrong password, and counts it', async () => {
      const { client, config } = await staleClient(overrides())
      await askToEnrol(client)
      const wrong = await prove(client, { event: 'reauth.password', username: 'alice', password: 'guess' })
      expect(wrong.headers.get('location')).toBe(`${ORIGIN}/auth/step/reauthenticate`)
      expect(config.logger.warn).toHaveBeenCalledWith('reauthentication-failed')
      const page = await (await client.send({ path: '/step/reauthenticate', headers: HTML })).text()
      expect(page).toContain('That did not work')
      // Still stale: the action is asked again.
      expect((await askToEnrol(client)).headers.get('location')).toBe(`${ORIGIN}/auth/step/reauthenticate`)
    })

    it('voids the re-authentication after five wrong passwords', async () => {
      const { client } = await staleClient(overrides())
      await askToEnrol(client)
      let last: Response | undefined
      for (let attempt = 0; attempt < 5; attempt++) {
        last = await prove(client, { event: 'reauth.password', username: 'alice', password: `guess-${attempt}` })
      }
      expect(last!.headers.get('location')).toBe(`${ORIGIN}/auth/error?error=AccessDenied`)
    })
  })
}
