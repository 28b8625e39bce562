/**
 * README `extension.ts`: a new user is asked for a name (the application's own page step), then for
 * the terms, and only then signed in with the name they chose; a returning user is asked nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { AuthConfig } from '../../core/types.js'
import { Client, ORIGIN, SECRET } from '../fixtures/http.js'
import { loadSnippet } from './snippet.js'

const dir = mkdtempSync(join(tmpdir(), 'authchart-readme-extension-'))
const { config } = await loadSnippet<{ config: AuthConfig }>('extension.ts', {
  AUTH_SECRET: SECRET,
  AUTH_DATA_DIR: join(dir, 'auth-data'),
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const STEP = '/step/signin-completion'

describe('README extension.ts', () => {
  it('asks a new user for a name, then for the terms, then signs them in under that name', async () => {
    const client = new Client(config)
    const first = await client.signIn({ username: 'alice', password: 'wonderland' })
    expect(first.headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
    expect(await (await client.send({ path: STEP })).text()).toContain('Choose a name')
    const named = await client.send({ path: STEP, body: { csrfToken: await client.csrfToken(), name: 'Queen of Hearts' } })
    expect(named.headers.get('location')).toBe(`${ORIGIN}/auth${STEP}`)
    expect(await (await client.send({ path: STEP })).text()).toContain('Be excellent to each other.')
    await client.send({ path: STEP, body: { csrfToken: await client.csrfToken(), event: 'terms.accept' } })
    expect((await client.session()).body).toMatchObject({ user: { name: 'Queen of Hearts' } })

    await client.signOut()
    const again = await client.signIn({ username: 'alice', password: 'wonderland' })
    expect(again.headers.get('location')).toBe(ORIGIN)
  })
})
