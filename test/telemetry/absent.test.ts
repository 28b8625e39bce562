/**
 * No cost when telemetry is off: a sign-in and a session read in a fresh Node process resolve no
 * `@opentelemetry/*` module at all (a module hook logs every one that is); with `telemetry: true`
 * the same probe sees the API imported, so the probe can fail.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const work = mkdtempSync(join(tmpdir(), 'authchart-otel-probe-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

async function probe(telemetry: 'on' | 'off') {
  const log = join(work, `${telemetry}.log`)
  writeFileSync(log, '')
  const { stdout } = await run(process.execPath, ['--import', './test/scale/ts-register.mjs', 'test/telemetry/probe.ts', telemetry], {
    env: { ...process.env, PROBE_LOG: log },
    timeout: 60_000,
  })
  return { answers: JSON.parse(stdout.trim().split('\n').at(-1)!), resolved: readFileSync(log, 'utf8').split('\n').filter(Boolean) }
}

describe('telemetry off costs nothing', () => {
  it('loads no @opentelemetry module for a sign-in and a session read', async () => {
    const { answers, resolved } = await probe('off')
    expect(answers).toEqual({ signIn: 302, session: 200, user: expect.objectContaining({}) })
    expect(resolved).toEqual([])
  }, 60_000)

  it('imports the API on the first request with telemetry: true (the probe sees a load)', async () => {
    const { answers, resolved } = await probe('on')
    expect(answers.signIn).toBe(302)
    expect(resolved).toContain('@opentelemetry/api')
  }, 60_000)
})
