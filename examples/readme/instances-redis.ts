import { Redis } from 'ioredis'
import type { AuthConfig } from 'authchart'
import { redisAuthStore } from 'authchart/stores/redis'
import { config as credentials } from './auth.js'

// JWT sessions (no database) with the shared state in Redis.
export const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')

export const config = {
  ...credentials,
  store: redisAuthStore(redis),
  rateLimit: { credentials: { perIdentifier: 5, perAddress: 50, window: 10 * 60 } },
} satisfies AuthConfig
