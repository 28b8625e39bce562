/** HEAD through the Node integrations: answered as GET, without a body (not 400). */
import type { AddressInfo } from 'node:net'
import express from 'express'
import Fastify from 'fastify'
import { afterAll, describe, expect, it } from 'vitest'
import { ExpressAuth } from '../../integrations/express/index.js'
import { fastifyAuth } from '../../integrations/fastify/index.js'
import { attackTargetConfig } from './origin-attacks.js'

const closers: (() => Promise<unknown>)[] = []
afterAll(async () => {
  for (const close of closers) await close()
})

async function expressOrigin(): Promise<string> {
  const app = express()
  app.use('/auth', ExpressAuth(attackTargetConfig()))
  const server = await new Promise<import('node:http').Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s))
  })
  closers.push(() => new Promise((resolve) => server.close(resolve)))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

async function fastifyOrigin(): Promise<string> {
  const app = Fastify()
  await app.register(fastifyAuth, attackTargetConfig())
  closers.push(() => app.close())
  return app.listen({ port: 0, host: '127.0.0.1' })
}

describe.each([
  ['Express', expressOrigin],
  ['Fastify', fastifyOrigin],
])('%s: HEAD', (_name, start) => {
  it('answers HEAD on the auth routes as GET, with no body', async () => {
    const origin = await start()
    for (const path of ['/auth/signin', '/auth/session', '/auth/providers']) {
      const get = await fetch(`${origin}${path}`)
      const head = await fetch(`${origin}${path}`, { method: 'HEAD' })
      expect(head.status, path).toBe(get.status)
      expect(head.headers.get('content-type'), path).toBe(get.headers.get('content-type'))
      expect(await head.text(), path).toBe('')
    }
  })
})
