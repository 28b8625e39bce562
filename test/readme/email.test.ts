/**
 * README `email.ts`: both providers are listed; a Nodemailer sign-in sends the message through the
 * SMTP server the environment names (a real one on loopback) and its link signs in, through the
 * confirmation page, with a database session. (Resend would call its API on the internet: only its
 * configuration is checked here; test/email/providers.test.ts drives it against a stand-in.)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { assertConfig } from '../../core/index.js'
import type { AuthConfig } from '../../core/types.js'
import { EmailClient } from '../email/helpers.js'
import { SECRET } from '../fixtures/http.js'
import { startSmtpServer } from '../fixtures/smtp.js'
import { loadSnippet } from './snippet.js'

const smtp = await startSmtpServer()
const dir = mkdtempSync(join(tmpdir(), 'authchart-readme-email-'))
const { config } = await loadSnippet<{ config: AuthConfig }>('email.ts', {
  AUTH_SECRET: SECRET,
  AUTH_DATA_DIR: join(dir, 'auth-data'),
  EMAIL_SERVER: smtp.url,
  AUTH_RESEND_KEY: 're_readme',
})
afterAll(async () => {
  await smtp.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('README email.ts', () => {
  it('lists Nodemailer and Resend, Resend with codes and its key from the environment', async () => {
    const body = await (await new EmailClient(config).send({ path: '/providers' })).json()
    expect(Object.keys(body as object)).toEqual(['nodemailer', 'resend'])
    const resend = assertConfig(config).providerById.get('resend')!
    expect(resend.config.apiKey).toBe('re_readme')
    expect(resend.email?.code).toMatchObject({ length: 6 })
  })

  it('signs in by the link Nodemailer sent, with a database session', async () => {
    const client = new EmailClient(config)
    await client.requestLink('reader@example.com', {}, 'nodemailer')
    const mail = await smtp.next()
    expect(mail.from?.value).toEqual([{ name: 'Example', address: 'no-reply@example.com' }])
    const link = new URL(/^(https:\/\/\S+)$/m.exec(mail.text ?? '')![1]!)
    await client.confirm(link)
    expect(client.jar.get('__Secure-authjs.session-token')).toMatch(/^[0-9a-f-]{36}$/)
    expect((await client.session()).body).toMatchObject({ user: { email: 'reader@example.com' } })
  })
})
