/**
 * No secret in any audit event: the flows are driven with marker values in every field an
 * attacker or a user controls (passwords, codes, addresses, callback URLs and their queries,
 * request ids) and every record of every sink is scanned for them, and for the config's secret,
 * the tokens sent and every cookie value set.
 */
import { describe, expect, it } from 'vitest'
import type { AuditEvent } from '../../core/audit/types.js'
import { Client, credentialsProvider, SECRET, testConfig } from '../fixtures/http.js'
import { EmailClient, emailConfig, lastLink } from '../email/helpers.js'
import { expectNoSecret, MARKER, marker, markedCredentialsAttempts } from '../fixtures/privacy.js'
import { auditTrail } from '../../core/audit.js'


/** Every value a sink received, as text: function sinks and the debug logger. */
function sinks() {
  const records: unknown[] = []
  const debug = (code: string, metadata?: unknown) => {
    if (code === 'audit') records.push(metadata)
  }
  return {
    records,
    audit: auditTrail({ sink: [(event: AuditEvent) => void records.push(event), 'logger' as const] }),
    logger: { error: () => {}, warn: () => {}, debug },
  }
}

function scan(records: unknown[], secrets: string[]) {
  expect(records.length).toBeGreaterThan(0)
  expectNoSecret(JSON.stringify(records), secrets)
}

describe('audit events hold no secret', () => {
  it('credentials: passwords, identifiers, callback URLs, cookies and the secret appear in no record', async () => {
    const { records, audit, logger } = sinks()
    const config = testConfig({
      audit,
      logger,
      providers: [
        credentialsProvider((c) =>
          c.password === marker('good-password') ? { id: 'u-7', name: marker('name'), email: `${marker('mail')}@example.com` } : null,
        ),
      ],
      rateLimit: { credentials: { perIdentifier: 2 } },
    })
    const client = new Client(config)
    const seen: string[] = [SECRET, ...(await markedCredentialsAttempts(client, [marker('bad-password'), marker('good-password'), marker('bad-password'), marker('bad-password')]))]
    await client.signOut()
    expect(records.some((record) => (record as AuditEvent).kind === 'rate-limited')).toBe(true)
    // A request id is the operator's correlation id, kept as given when it is a plain token.
    const withoutRequestIds = records.map((record) => ({ ...(record as AuditEvent), requestId: '' }))
    scan(withoutRequestIds, seen)
  })

  it('e-mail: the address, the link token, right and wrong codes appear in no record', async () => {
    const { records, audit, logger } = sinks()
    const { config, outbox } = emailConfig({ provider: { code: true }, overrides: { audit, logger } })
    const address = `${marker('person').toLowerCase()}@example.com`
    const client = new EmailClient(config)
    await client.requestLink(address, { callbackUrl: `/after?${marker('q')}=1` })
    const { code } = outbox[0]!
    const link = lastLink(outbox)
    await client.enterCode(`${MARKER.slice(0, 2)}${code!.slice(2)}`)
    await client.enterCode(code!)
    const other = new EmailClient(config)
    await other.requestLink(address)
    await other.confirm(lastLink(outbox))
    expect(records).toContainEqual(
      expect.objectContaining({ outcome: { type: 'refused', error: 'InvalidCode', cause: 'checkCode', state: 'awaitingCode' } }),
    )
    // Two sign-ins, each received by both sinks.
    expect(records.filter((record) => (record as AuditEvent).outcome?.type === 'signed-in')).toHaveLength(4)
    scan(records, [SECRET, address, code!, link.searchParams.get('token')!, ...client.jar.cookies.values(), ...other.jar.cookies.values()])
  })
})
