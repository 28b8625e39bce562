/** README `auth.ts`: the credentials configuration signs Alice in with her password, and no one else. */
import { describe, expect, it } from 'vitest'
import type { AuthConfig } from '../../core/types.js'
import { Client, SECRET } from '../fixtures/http.js'
import { loadSnippet } from './snippet.js'

const { config } = await loadSnippet<{ config: AuthConfig }>('auth.ts', { AUTH_SECRET: SECRET })

describe('README auth.ts', () => {
  it('signs alice in with "wonderland", with the name and email of the store', async () => {
    const client = new Client(config)
    const signIn = await client.signIn({ username: 'alice', password: 'wonderland' })
    expect(signIn.status).toBe(302)
    expect((await client.session()).body).toMatchObject({ user: { name: 'Alice', email: 'alice@example.com' } })
  })

  it.each([
    ['a wrong password', { username: 'alice', password: 'wonderlan' }],
    ['an unknown user', { username: 'mallory', password: 'wonderland' }],
    ['missing fields', {}],
  ])('refuses %s with CredentialsSignin', async (_case, credentials) => {
    const client = new Client(config)
    const signIn = await client.signIn(credentials as Record<string, string>)
    expect(signIn.headers.get('location')).toContain('error=CredentialsSignin')
    expect((await client.session()).body).toBeNull()
  })
})
