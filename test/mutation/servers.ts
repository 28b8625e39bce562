/**
 * Vitest global setup of `npm run mutate -- stores` and `-- adapters` (test/mutation/vitest.config.ts): one
 * PostgreSQL and one Redis server for the whole run, so that a mutant's tests connect to them
 * instead of starting servers (or PGlite) again; the test files reach them with
 * `inject('mutationServers')`. Outside a mutation run the tests start their own.
 *
 * @module
 */
import type { TestProject } from 'vitest/node'
import { startPostgres } from '../fixtures/postgres.js'
import { startRedis } from '../fixtures/redis.js'

declare module 'vitest' {
  export interface ProvidedContext {
    mutationServers: { postgres: string; redis: string } | undefined
  }
}

export default async function setup(project: TestProject) {
  const [postgres, redis] = await Promise.all([startPostgres(), startRedis()])
  project.provide('mutationServers', { postgres: await postgres.createDatabase('mutation_stores'), redis: redis.url })
  return async () => {
    await Promise.all([postgres.stop(), redis.stop()])
  }
}
