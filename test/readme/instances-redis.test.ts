/**
 * README `instances-redis.ts`: with the store in Redis, the credentials limit of the snippet (5 per
 * identifier) holds, and a sign-out everywhere ends a JWT session.
 */
import { afterAll, describe, expect, it } from 'vitest'
import type { Redis } from 'ioredis'
import { revokeAllSessions } from '../../core/index.js'
import type { AuthConfig } from '../../core/types.js'
import { Client, SECRET } from '../fixtures/http.js'
import { startRedis } from '../fixtures/redis.js'
import { loadSnippet } from './snippet.js'

const server = await startRedis()
const { config, redis } = await loadSnippet<{ config: AuthConfig; redis: Redis }>('instances-redis.ts', {
  AUTH_SECRET: SECRET,
  REDIS_URL: server.url,
})
afterAll(async () => {
  await redis.quit()
  await server.stop()
})

describe('README instances-redis.ts', () => {
  it('refuses the sixth attempt at one identifier', async () => {
    for (let i = 0; i < 5; i++) {
      const response = await new Client(config).signIn({ username: 'bob', password: 'guess' })
      expect(response.headers.get('location')).toContain('code=credentials')
    }
    const refused = await new Client(config).signIn({ username: 'bob', password: 'guess' })
    expect(refused.headers.get('location')).toContain('code=rate_limited')
  })

  it('ends a JWT session when the user is signed out everywhere', async () => {
    const client = new Client(config)
    await client.signIn({ username: 'alice', password: 'wonderland' })
    const { user } = (await client.session()).body as { user: { email: string } }
    expect(user.email).toBe('alice@example.com')
    await revokeAllSessions(config, '1')
    expect((await client.session()).body).toBeNull()
  })
})
