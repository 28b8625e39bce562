/**
 * The default logger never prints a line that says nothing: every warning has its text, an error
 * without a message says what its type means, an upstream's answer is printed as details, and
 * `MissingSecret` keeps Auth.js's exact message with the hint on a line of its own.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Auth } from '../../core/index.js'
import { CredentialsSignin, MissingSecret, OAuthCallbackError } from '../../core/errors.js'
import { createLogger, type WarningCode } from '../../core/logger.js'
import { SECRET } from '../fixtures/http.js'

let printed: string[]

beforeEach(() => {
  printed = []
  const record = (...args: unknown[]) => void printed.push(args.map(String).join(' '))
  vi.spyOn(console, 'error').mockImplementation(record)
  vi.spyOn(console, 'warn').mockImplementation(record)
  vi.spyOn(console, 'log').mockImplementation(record)
})

afterEach(() => {
  vi.restoreAllMocks()
})

describe('the default logger', () => {
  it('prints MissingSecret with Auth.js message, then a hint naming AUTH_SECRET and the secret command', () => {
    createLogger({}).error(new MissingSecret('Please define a `secret`'))
    expect(printed[0]).toBe('[auth][error] MissingSecret: Please define a `secret`')
    expect(printed[1]).toMatch(/^\[auth\]\[hint\]: .*AUTH_SECRET.*`npx authchart secret`/)
  })

  it('prints the hint when Auth answers a config without a secret, keeping the message exact', async () => {
    const response = await Auth(new Request('http://localhost/auth/session'), { trustHost: true, providers: [] })
    expect(response.status).toBe(500)
    expect(printed).toContain('[auth][error] MissingSecret: Please define a `secret`')
    expect(printed.some((line) => line.startsWith('[auth][hint]:') && line.includes('AUTH_SECRET'))).toBe(true)
  })

  it.each<WarningCode>([
    'debug-enabled',
    'csrf-disabled',
    'env-url-basepath-redundant',
    'env-url-basepath-mismatch',
    'experimental-webauthn',
    'inspector-refused-in-production',
    'email-send-throttled',
    'credentials-rate-limited',
    'second-factor-attempts-exhausted',
    'reauthentication-failed',
    'reauthentication-other-user',
    'reauthentication-unavailable',
    'inspector-refused-outside-development',
    'inspector-refused-remote-client',
  ])('prints the %s warning with a sentence after its code', (code) => {
    createLogger({}).warn(code)
    // A once-per-process warning may have been printed by an earlier test of this file.
    for (const line of printed) expect(line).toMatch(new RegExp(`^\\[auth\\]\\[warn\\]\\[${code}\\] \\S.{20,}`))
  })

  it('prints the experimental-webauthn warning once per process, however many configs load', async () => {
    vi.resetModules()
    const fresh = (await import('../../core/logger.js')) as typeof import('../../core/logger.js')
    const logger = fresh.createLogger({})
    logger.warn('experimental-webauthn')
    logger.warn('experimental-webauthn')
    fresh.createLogger({}).warn('experimental-webauthn')
    expect(printed.filter((line) => line.startsWith('[auth][warn][experimental-webauthn]'))).toHaveLength(1)
  })

  it('prints a request-time warning every time', () => {
    const logger = createLogger({})
    logger.warn('credentials-rate-limited')
    logger.warn('credentials-rate-limited')
    expect(printed.filter((line) => line.startsWith('[auth][warn][credentials-rate-limited]'))).toHaveLength(2)
  })

  it('says what a bare CredentialsSignin means instead of an empty message', () => {
    createLogger({}).error(new CredentialsSignin())
    expect(printed[0]).toBe(
      '[auth][error] CredentialsSignin: the credentials were refused (authorize returned null or threw CredentialsSignin)',
    )
  })

  it("prints the provider's error answer as details, escaped, and nothing else of the cause", () => {
    createLogger({}).error(
      new OAuthCallbackError('OAuth Provider returned an error', {
        providerId: 'github',
        error: 'access_denied',
        error_description: 'The user said no\n[auth][error] forged',
        access_token: 'must-never-be-printed',
      }),
    )
    expect(printed[0]).toBe('[auth][error] OAuthCallbackError: OAuth Provider returned an error')
    expect(printed[1]).toBe(
      '[auth][details]: {"providerId":"github","error":"access_denied","error_description":"The user said no\\n[auth][error] forged"}',
    )
    expect(printed.join('\n')).not.toContain('must-never-be-printed')
    expect(printed.join('\n').split('\n').filter((line) => line.startsWith('[auth][error]'))).toHaveLength(1)
  })

  it('logs nothing without text through Auth: an empty-message error is explained', async () => {
    const secret = SECRET
    await Auth(new Request('http://localhost/auth/nope'), { secret, trustHost: true, providers: [] })
    for (const line of printed) expect(line).not.toMatch(/: $|\]$/)
  })
})
