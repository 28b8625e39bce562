/**
 * The telemetry observer through `Auth`: its options checked when the config loads, the API
 * loaded once and loaded again after a failed load (the request goes on without a span, logged),
 * and each request's span fed from the observer's own record: the flow, its outcome and the
 * effects, and never the client's address.
 */
import { describe, expect, it, vi } from 'vitest'
import { Client, credentialsProvider, testConfig } from '../fixtures/http.js'
import { openTelemetry } from '../../core/telemetry.js'
import { setClientAddress } from '../../core/index.js'
import { otelSdk } from '../telemetry/helpers.js'
import { trace, metrics, context } from '@opentelemetry/api'

const serverSpans = (sdk: ReturnType<typeof otelSdk>) => sdk.spans().filter((span) => span.kind === 1)

describe('the telemetry observer', () => {
  it('refuses options whose tracer, meter or API lacks what is used, when the config loads', async () => {
    for (const options of [{ tracer: {} }, { meter: { createCounter: () => ({}) } }, { api: { trace: {} } }]) {
      const client = new Client(testConfig({ telemetry: openTelemetry(options as never) }))
      const answer = await client.send({ path: '/providers' }).catch((error: unknown) => error)
      expect(answer instanceof Response ? answer.status : 500).toBe(500)
    }
  })

  it('loads the API once for every request, and again after a load that failed', async () => {
    const sdk = otelSdk()
    const tracer = sdk.tracerProvider.getTracer('authchart')
    const meter = sdk.meterProvider.getMeter('authchart')
    let failures = 1
    const getTracer = vi.fn(() => {
      if (failures-- > 0) throw new Error('the API is not ready')
      return tracer
    })
    const api = { trace: { ...trace, getTracer, setSpan: trace.setSpan.bind(trace) }, metrics: { ...metrics, getMeter: () => meter }, context }
    const config = testConfig({ telemetry: openTelemetry({ api: api as never }) })
    const client = new Client(config)
    await client.send({ path: '/providers' })
    expect(serverSpans(sdk)).toEqual([])
    expect(config.logger.error).toHaveBeenCalled()
    await client.send({ path: '/providers' })
    await client.send({ path: '/csrf' })
    expect(getTracer).toHaveBeenCalledTimes(2)
    expect(serverSpans(sdk).map((span) => span.name)).toEqual(['GET /auth/providers', 'GET /auth/csrf'])
  })

  it('gives the span the flow, its outcome and its effects, and never the client address', async () => {
    const sdk = otelSdk()
    const config = testConfig({ telemetry: sdk.telemetry, providers: [credentialsProvider()] })
    const client = new Client(config)
    const csrfToken = await client.csrfToken()
    const request = (await import('../fixtures/http.js')).authRequest({
      path: '/auth/callback/credentials',
      body: { username: 'alice', password: 'wonderland', csrfToken },
      cookies: client.jar,
    })
    const { Auth } = await import('../../core/index.js')
    const response = await Auth(setClientAddress(request, '203.0.113.77'), config)
    expect(response.status).toBe(302)
    const span = serverSpans(sdk).find((found) => found.attributes['authchart.action'] === 'callback')!
    expect(span.attributes).toMatchObject({ 'authchart.flow': 'credentials-signin', 'authchart.outcome': 'signed-in', 'authchart.provider': 'credentials' })
    const children = sdk.spans().filter((found) => found.parentSpanContext?.spanId === span.spanContext().spanId)
    expect(children.length).toBeGreaterThan(0)
    expect(JSON.stringify(sdk.spans().map((found) => [found.attributes, found.events]))).not.toContain('203.0.113.77')
  })
})
