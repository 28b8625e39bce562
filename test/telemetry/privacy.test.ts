/**
 * No secret in any span or metric point: the flows are driven with marker values in every field
 * an attacker or a user controls (passwords, codes, addresses, callback URLs and their queries,
 * request ids, the user agent) and every span (name, attributes, events, status) and every metric
 * point's attributes are scanned for them, and for the secret, the codes and the cookies.
 */
import { describe, expect, it } from 'vitest'
import { EmailClient, emailConfig, lastLink } from '../email/helpers.js'
import { Client, credentialsProvider, SECRET, testConfig } from '../fixtures/http.js'
import { expectNoSecret, MARKER, marker, markedCredentialsAttempts } from '../fixtures/privacy.js'
import { otelSdk } from './helpers.js'


async function recorded(sdk: ReturnType<typeof otelSdk>) {
  const spans = sdk.spans().map((span) => ({ name: span.name, attributes: span.attributes, events: span.events, status: span.status }))
  const points = (await sdk.points()).map((point) => ({ name: point.name, attributes: point.attributes }))
  return { spans, points }
}

describe('spans and metric points hold no secret', () => {
  it('credentials: passwords, identifiers, queries, headers, cookies, thrown messages and the secret appear nowhere', async () => {
    const sdk = otelSdk()
    const config = testConfig({
      telemetry: sdk.telemetry,
      providers: [
        credentialsProvider((c) => {
          if (c.password === marker('throw')) throw new Error(`${marker('thrown')} for ${String(c.username)}`)
          return c.password === marker('good-password') ? { id: 'u-7', name: marker('name'), email: `${marker('mail')}@example.com` } : null
        }),
      ],
      rateLimit: { credentials: { perIdentifier: 3 } },
    })
    const client = new Client(config)
    const seen: string[] = [SECRET, ...(await markedCredentialsAttempts(client, [marker('bad-password'), marker('good-password'), marker('throw'), marker('bad-password'), marker('bad-password')]))]
    await client.session()
    await client.signOut()
    const { spans, points } = await recorded(sdk)
    expect(spans.length).toBeGreaterThan(10)
    expect(points.some((point) => point.name === 'authchart.rate_limit.refusals')).toBe(true)
    expect(points.some((point) => point.name === 'authchart.sign_ins')).toBe(true)
    expectNoSecret(JSON.stringify({ spans, points }), seen)
  })

  it('e-mail: the address, the link token, right and wrong codes appear nowhere', async () => {
    const sdk = otelSdk()
    const { config, outbox } = emailConfig({ provider: { code: true }, overrides: { telemetry: sdk.telemetry } })
    const address = `${marker('person').toLowerCase()}@example.com`
    const client = new EmailClient(config)
    await client.requestLink(address, { callbackUrl: `/after?${marker('q')}=1` })
    const { code } = outbox[0]!
    await client.enterCode(`${MARKER.slice(0, 2)}${code!.slice(2)}`)
    await client.enterCode(code!)
    const other = new EmailClient(config)
    await other.requestLink(address)
    const link = lastLink(outbox)
    await other.open(link)
    await other.confirm(link)
    const { spans, points } = await recorded(sdk)
    expect(spans.some((span) => span.attributes['authchart.outcome'] === 'signed-in')).toBe(true)
    expectNoSecret(JSON.stringify({ spans, points }), [SECRET, address, code!, link.searchParams.get('token')!, ...client.jar.cookies.values(), ...other.jar.cookies.values()])
  })
})
