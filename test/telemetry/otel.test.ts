/**
 * OpenTelemetry through `Auth`, recorded with the SDK's in-memory exporters: a credentials
 * sign-in, an OIDC sign-in against the local provider and a refused e-mail code each give a
 * server span with its flow and outcome, child spans for the effects with their durations, and
 * metric points (sign-ins, failures by cause, session reads, rate-limit refusals, effect latency).
 */
import { metrics, trace } from '@opentelemetry/api'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EmailClient, emailConfig } from '../email/helpers.js'
import { Client, credentialsProvider, testConfig } from '../fixtures/http.js'
import { startOidcProvider, type RunningOidcProvider } from '../fixtures/oidc-provider.js'
import { appProvider, opClient, signInThroughProvider } from '../oauth/helpers.js'
import { durationMs, otelSdk, requestTree, type Point } from './helpers.js'
import { openTelemetry } from '../../core/telemetry.js'

const serverSpans = (spans: ReturnType<ReturnType<typeof otelSdk>['spans']>) => spans.filter((span) => span.kind === 1)
const sum = (points: Point[], name: string, attributes: Record<string, unknown> = {}) =>
  points
    .filter((point) => point.name === name && Object.entries(attributes).every(([key, value]) => point.attributes[key] === value))
    .reduce((total, point) => total + (typeof point.value === 'number' ? point.value : point.value.count), 0)

describe('telemetry of a credentials sign-in', () => {
  it('gives the request span (method, path without query, status, flow, chart version, outcome) and effect spans with durations', async () => {
    const sdk = otelSdk()
    const client = new Client(testConfig({ telemetry: sdk.telemetry }))
    const csrfToken = await client.csrfToken()
    const response = await client.send({
      path: '/callback/credentials',
      query: { from: 'somewhere' },
      body: { username: 'alice', password: 'wonderland', csrfToken },
    })
    expect(response.status).toBe(302)
    const spans = sdk.spans()
    const request = serverSpans(spans).find((span) => span.attributes['authchart.action'] === 'callback')!
    expect(request.name).toBe('POST /auth/callback/{provider}')
    expect(request.attributes).toMatchObject({
      'http.request.method': 'POST',
      'url.path': '/auth/callback/credentials',
      'http.route': '/auth/callback/{provider}',
      'http.response.status_code': 302,
      'authchart.flow': 'credentials-signin',
      'authchart.outcome': 'signed-in',
      'authchart.provider': 'credentials',
    })
    expect(request.attributes['authchart.chart_version']).toMatch(/^\d+$/)
    const effects = requestTree(spans, request)
    const names = effects.map((span) => span.attributes['authchart.effect.name'])
    expect(names).toContain('authorize')
    expect(names).toContain('issueSession')
    for (const effect of effects) {
      expect(effect.name).toBe(`authchart.effect ${effect.attributes['authchart.effect.name']}`)
      expect(durationMs(effect)).toBeGreaterThanOrEqual(0)
      expect(effect.ended).toBe(true)
    }
    expect(effects.find((span) => span.attributes['authchart.effect.name'] === 'authorize')!.attributes['authchart.effect.kind']).toBe('hash')
    const points = await sdk.points()
    expect(sum(points, 'authchart.sign_ins', { 'authchart.provider': 'credentials', 'authchart.flow': 'credentials-signin' })).toBe(1)
    expect(sum(points, 'authchart.effect.duration', { 'authchart.effect.name': 'authorize' })).toBe(1)
    expect(sum(points, 'http.server.request.duration', { 'http.route': '/auth/callback/{provider}', 'http.response.status_code': 302 })).toBe(1)

    await client.session()
    await client.session()
    expect(sum(await sdk.points(), 'authchart.session.reads')).toBe(2)
    const reads = serverSpans(sdk.spans()).filter((span) => span.attributes['authchart.action'] === 'session')
    expect(reads).toHaveLength(2)
    expect(reads[0]!.attributes['http.response.status_code']).toBe(200)
  })

  it('counts a wrong password by cause, and a rate limit, without failing the span', async () => {
    const sdk = otelSdk()
    const client = new Client(testConfig({ telemetry: sdk.telemetry, rateLimit: { credentials: { perIdentifier: 2 } } }))
    for (let attempt = 0; attempt < 3; attempt++) {
      const csrfToken = await client.csrfToken()
      await client.send({ path: '/callback/credentials', body: { username: 'alice', password: 'wrong', csrfToken } })
    }
    const points = await sdk.points()
    expect(sum(points, 'authchart.sign_in.failures', { 'error.type': 'CredentialsSignin', 'authchart.provider': 'credentials' })).toBe(3)
    expect(sum(points, 'authchart.rate_limit.refusals', { 'authchart.flow': 'credentials-signin' })).toBe(1)
    const refused = serverSpans(sdk.spans()).filter((span) => span.attributes['authchart.outcome'] === 'refused')
    expect(refused).toHaveLength(3)
    expect(refused[0]!.attributes['error.type']).toBe('CredentialsSignin')
    // A refusal is an answer, not a server error.
    expect(refused[0]!.status.code).not.toBe(2)
  })

  it('records an effect that throws by its error type only, never its message', async () => {
    const sdk = otelSdk()
    const config = testConfig({
      telemetry: sdk.telemetry,
      providers: [
        credentialsProvider(() => {
          throw new TypeError('the input was alice@example.com / hunter2')
        }),
      ],
    })
    const client = new Client(config)
    const csrfToken = await client.csrfToken()
    await client.send({ path: '/callback/credentials', body: { username: 'alice', password: 'hunter2', csrfToken } })
    const spans = sdk.spans()
    const text = JSON.stringify(spans.map((span) => ({ attributes: span.attributes, events: span.events, status: span.status })))
    expect(text).not.toContain('hunter2')
    expect(text).not.toContain('alice@example.com')
    const request = serverSpans(spans).find((span) => span.attributes['authchart.action'] === 'callback')!
    expect(request.attributes['authchart.outcome']).toBe('refused')
  })
})

describe('telemetry of an OIDC sign-in against the local provider', () => {
  let op: RunningOidcProvider
  beforeAll(async () => {
    op = await startOidcProvider({ clients: [await opClient('client_secret_basic', 'op-otel')] })
  })
  afterAll(() => op?.close())

  it('gives the callback span with the provider token call and profile as effect spans, and counts the sign-in', async () => {
    const sdk = otelSdk()
    const client = new Client(testConfig({ telemetry: sdk.telemetry, providers: [appProvider(op.issuer, 'client_secret_basic', 'op-otel') as never] }))
    const { callback } = await signInThroughProvider(client, 'op-otel')
    expect(callback.status).toBe(302)
    const spans = sdk.spans()
    const started = serverSpans(spans).find((span) => span.attributes['authchart.action'] === 'signin')!
    expect(started.attributes).toMatchObject({ 'authchart.flow': 'oauth-signin', 'authchart.outcome': 'step', 'authchart.provider': 'op-otel' })
    const request = serverSpans(spans).find((span) => span.attributes['authchart.action'] === 'callback')!
    expect(request.attributes).toMatchObject({
      'http.request.method': 'GET',
      'url.path': '/auth/callback/op-otel',
      'authchart.outcome': 'signed-in',
      'authchart.provider': 'op-otel',
      'http.response.status_code': 302,
    })
    const exchange = requestTree(spans, request).find((span) => span.attributes['authchart.effect.name'] === 'exchangeCode')!
    expect(exchange.attributes['authchart.effect.kind']).toBe('provider')
    // A real HTTP round trip to the provider's token endpoint.
    expect(durationMs(exchange)).toBeGreaterThan(0)
    const points = await sdk.points()
    expect(sum(points, 'authchart.sign_ins', { 'authchart.provider': 'op-otel' })).toBe(1)
    expect(sum(points, 'authchart.effect.duration', { 'authchart.effect.kind': 'provider' })).toBeGreaterThanOrEqual(1)
  })
})

describe('telemetry of a refused e-mail code', () => {
  it('gives the refused step with its cause on the span and in the failure counter', async () => {
    const sdk = otelSdk()
    const { config, outbox } = emailConfig({ provider: { code: true }, overrides: { telemetry: sdk.telemetry } })
    const client = new EmailClient(config)
    await client.requestLink('reader@example.com')
    const sent = serverSpans(sdk.spans()).find((span) => span.attributes['authchart.action'] === 'signin')!
    expect(requestTree(sdk.spans(), sent).some((span) => span.attributes['authchart.effect.kind'] === 'send')).toBe(true)
    const { code } = outbox[0]!
    await client.enterCode(code === '000000' ? '111111' : '000000')
    const request = serverSpans(sdk.spans()).find((span) => span.attributes['authchart.action'] === 'callback')!
    expect(request.attributes).toMatchObject({
      'authchart.outcome': 'refused',
      'error.type': 'InvalidCode',
      'authchart.refusal.cause': 'checkCode',
      'authchart.provider': 'email',
    })
    expect(requestTree(sdk.spans(), request).find((span) => span.attributes['authchart.effect.name'] === 'checkCode')!.attributes['authchart.effect.result']).toBe('failed')
    const points = await sdk.points()
    expect(sum(points, 'authchart.sign_in.failures', { 'error.type': 'InvalidCode', 'authchart.refusal.cause': 'checkCode', 'authchart.provider': 'email' })).toBe(1)
    expect(sum(points, 'authchart.sign_ins')).toBe(0)
  })
})

describe('telemetry: openTelemetry()', () => {
  it('uses the globally registered tracer and meter providers', async () => {
    const sdk = otelSdk()
    trace.setGlobalTracerProvider(sdk.tracerProvider)
    metrics.setGlobalMeterProvider(sdk.meterProvider)
    try {
      const client = new Client(testConfig({ telemetry: openTelemetry() }))
      await client.session()
      expect(serverSpans(sdk.spans()).map((span) => span.name)).toContain('GET /auth/session')
      expect(sum(await sdk.points(), 'authchart.session.reads')).toBe(1)
    } finally {
      trace.disable()
      metrics.disable()
    }
  })
})
