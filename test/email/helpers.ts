/**
 * Builders for e-mail sign-in tests: a config with the memory adapter and an outbox sender, and a
 * browser-like client that asks for a link, opens it, confirms it and types codes.
 *
 * @module
 */
import { expect, vi } from 'vitest'
import { createMemoryStore, MemoryAdapter, type MemoryStore } from '../../adapters/memory.js'
import type { Adapter, VerificationToken } from '../../core/adapters.js'
import type { SendVerificationRequestParams } from '../../core/email/provider.js'
import type { AuthConfig } from '../../core/types.js'
import Email from '../../providers/email.js'
import type { EmailUserConfig } from '../../providers/email.js'
import { Client, ORIGIN, SECRET, spyLogger } from '../fixtures/http.js'
import { totp } from '../../core/second-factor.js'
import { stepUp } from '../../core/step-up.js'

/** The messages a test config "sent". */
export type Outbox = SendVerificationRequestParams[]

/** A config with one e-mail provider (id `email`) whose messages land in `outbox`. */
export function emailConfig(
  options: {
    store?: MemoryStore
    provider?: EmailUserConfig
    overrides?: Partial<AuthConfig>
  } = {},
) {
  const outbox: Outbox = []
  const store = options.store ?? createMemoryStore()
  const adapter = MemoryAdapter(store)
  const config = {
    secret: SECRET,
    secondFactor: totp(),
    stepUp: stepUp(),
    trustHost: true,
    logger: spyLogger(),
    adapter,
    session: { strategy: 'jwt' },
    providers: [
      Email({
        sendVerificationRequest: async (params) => {
          outbox.push(params)
        },
        ...options.provider,
      }),
    ],
    ...options.overrides,
  } as AuthConfig & { logger: ReturnType<typeof spyLogger> }
  return { config, outbox, store, adapter }
}

/** The link of the last message, parsed. */
export function lastLink(outbox: Outbox): URL {
  expect(outbox.length).toBeGreaterThan(0)
  return new URL(outbox.at(-1)!.url)
}

/** A browser for e-mail sign-in against one config. */
export class EmailClient extends Client {
  /** POST /signin/<provider> with the address (and extra fields). */
  async requestLink(email: string, extra: Record<string, string> = {}, provider = 'email'): Promise<Response> {
    const csrfToken = await this.csrfToken()
    return this.send({ path: `/signin/${provider}`, body: { email, csrfToken, ...extra } })
  }

  /** GET on the link, as a mail client or a scanner opens it. */
  async open(link: URL): Promise<Response> {
    return this.send({ path: `${link.pathname.slice(this.basePath.length)}`, query: Object.fromEntries(link.searchParams) })
  }

  /** Opens the link and presses "Sign in as …" on the confirmation page. */
  async confirm(link: URL): Promise<Response> {
    const page = await this.open(link)
    expect(page.status).toBe(200)
    const html = await page.text()
    const fields = Object.fromEntries(
      [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [
        m[1]!,
        m[2]!.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>'),
      ]),
    )
    const action = new URL(/<form action="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, '&'))
    return this.send({ path: action.pathname.slice(this.basePath.length), body: fields })
  }

  /** Types a code on the verify-request page (POST /callback/<provider>). */
  async enterCode(code: string, provider = 'email'): Promise<Response> {
    const csrfToken = await this.csrfToken()
    return this.send({ path: `/callback/${provider}`, body: { code, csrfToken } })
  }
}

/** A token store keyed by the token alone, as some adapters keep it: it hands a row to any address. */
export function addressBlind(memory: Adapter): Adapter {
  const rows = new Map<string, VerificationToken>()
  return {
    ...memory,
    createVerificationToken: async (row) => (rows.set(row.token, row), row),
    useVerificationToken: async ({ token }) => {
      const row = rows.get(token) ?? null
      rows.delete(token)
      return row
    },
  }
}

export { ORIGIN, SECRET, vi }
