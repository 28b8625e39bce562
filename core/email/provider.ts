/**
 * E-mail providers: the options every e-mail provider shares (Auth.js's, plus scanner-safe links,
 * one-time codes and send throttling), their defaults, and their validation when the config is
 * resolved. The provider files under `providers/` only say how a message is sent.
 *
 * @module
 */
import { escapeHtml } from '../pages/html.js'
import { ConfigError } from '../errors.js'
import { DEFAULT_CODE, DEFAULT_CODE_MAX_AGE, DEFAULT_FROM, DEFAULT_MAX_AGE } from './defaults.js'
import { FLOW_MODULE } from '../flows/kinds.js'
import { confirmationMessage, html, text } from './message.js'
import { customFetch } from '../symbols.js'
import { codeEntropyBits } from './secrets.js'
import type { EmailCodeOptions, EmailConfig, EmailThrottleOptions, EmailUserConfig, ResolvedEmailProvider, SendVerificationRequest, SendVerificationRequestParams } from './types.js'

export type {
  EmailCodeOptions,
  EmailConfig,
  EmailThrottleOptions,
  EmailUserConfig,
  ResolvedEmailProvider,
  SendVerificationRequest,
  SendVerificationRequestParams,
}


export { DEFAULT_CODE, DEFAULT_CODE_MAX_AGE, DEFAULT_FROM, DEFAULT_MAX_AGE }

const isPositiveInteger = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value > 0

/**
 * Checks and defaults an e-mail provider's options, once, when the config is resolved.
 *
 * @throws {ConfigError} `ERR_CONFIG_INVALID` naming the option (`config.providers.<i>.<option>`).
 */
export function resolveEmailProvider(config: Record<string, unknown>, index: number): ResolvedEmailProvider {
  const fail = (option: string, message: string): never => {
    throw new ConfigError(`config.providers.${index}.${option}: ${message}`, ['providers', index, option])
  }
  if (typeof config.sendVerificationRequest !== 'function') {
    fail('sendVerificationRequest', 'an e-mail provider needs a sendVerificationRequest function')
  }
  for (const option of ['normalizeIdentifier', 'generateVerificationToken'] as const) {
    if (config[option] !== undefined && typeof config[option] !== 'function') fail(option, 'must be a function')
  }
  const link = config.link ?? 'confirm'
  if (link !== 'confirm' && link !== 'direct') fail('link', 'must be "confirm" or "direct"')

  let code: ResolvedEmailProvider['code'] = null
  if (config.code !== undefined && config.code !== false) {
    const options = (config.code === true ? {} : config.code) as EmailCodeOptions
    if (typeof options !== 'object' || options === null) fail('code', 'must be true or { length, alphabet, attempts }')
    const length = options.length ?? DEFAULT_CODE.length
    const alphabet = options.alphabet ?? DEFAULT_CODE.alphabet
    const attempts = options.attempts ?? DEFAULT_CODE.attempts
    if (alphabet !== 'base32' && alphabet !== 'digits') fail('code.alphabet', 'must be "base32" or "digits"')
    if (!isPositiveInteger(length) || length < 6 || length > 8) fail('code.length', 'must be 6, 7 or 8')
    if (codeEntropyBits(length, alphabet) < 20) {
      fail('code.length', `${length} ${alphabet} characters carry fewer than 20 bits; use at least 7 digits`)
    }
    if (!isPositiveInteger(attempts) || attempts > 10) fail('code.attempts', 'must be an integer from 1 to 10')
    code = { length, alphabet, attempts }
  }

  const maxAge = config.maxAge ?? (code ? DEFAULT_CODE_MAX_AGE : DEFAULT_MAX_AGE)
  if (!isPositiveInteger(maxAge)) fail('maxAge', 'must be a positive number of seconds')

  let throttle: ResolvedEmailProvider['throttle'] = null
  if (config.throttle !== false) {
    const options = (config.throttle ?? {}) as EmailThrottleOptions
    if (typeof options !== 'object' || options === null) fail('throttle', 'must be false or an object')
    const perIdentifier = options.perIdentifier ?? 5
    const perAddress = options.perAddress ?? 30
    const window = options.window ?? 900
    for (const [name, value] of Object.entries({ perIdentifier, perAddress, window })) {
      if (!isPositiveInteger(value)) fail(`throttle.${name}`, 'must be a positive integer')
    }
    const addressHeader = options.addressHeader ?? null
    if (addressHeader !== null && (typeof addressHeader !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(addressHeader))) {
      fail('throttle.addressHeader', 'must be a header name')
    }
    if (options.failOpen !== undefined && typeof options.failOpen !== 'boolean') fail('throttle.failOpen', 'must be a boolean')
    throttle = {
      perIdentifier,
      perAddress,
      window,
      addressHeader: addressHeader?.toLowerCase() ?? null,
      failOpen: options.failOpen === true,
    }
  }
  return Object.freeze({ maxAge: maxAge as number, link: link as 'confirm' | 'direct', code, throttle })
}

/** The environment of the process, where there is one (read once, when a provider is created). */
function environment(): Record<string, string | undefined> {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {}
}

/** `AUTH_<ID>_KEY` for a provider id (upper case, `-` as `_`), as Auth.js's `setEnvDefaults` reads it. */
export function apiKeyFromEnvironment(id: string): string | undefined {
  return environment()[`AUTH_${id.toUpperCase().replace(/-/g, '_')}_KEY`]
}

/**
 * Builds an e-mail provider from a sender's defaults and the application's options: Auth.js's
 * shape (`options` merged over the defaults when the config is resolved). The API key comes from
 * the options, else from `AUTH_<ID>_KEY` of the environment at creation.
 */
export function emailProvider(
  defaults: Omit<EmailConfig, 'options'> & { usesApiKey?: boolean },
  options: EmailUserConfig = {},
): EmailConfig {
  const { usesApiKey, ...provider } = defaults
  const id = options.id ?? provider.id
  const apiKey = usesApiKey ? (options.apiKey ?? apiKeyFromEnvironment(id)) : undefined
  return {
    // Only an application that makes an e-mail provider bundles the e-mail flow (see ../flows/kinds.ts).
    [FLOW_MODULE]: loadEmailFlow,
    ...provider,
    ...(apiKey !== undefined ? { apiKey } : {}),
    options: { ...options, ...(apiKey !== undefined ? { apiKey } : {}) },
  } as EmailConfig
}

const loadEmailFlow = () => import('../flows/email/flow.js')

/** The `fetch` a provider sends with: its `customFetch` (proxies, tests), else the global one. */
export function fetchOf(provider: EmailConfig): typeof fetch {
  return provider[customFetch] ?? fetch
}

/**
 * An error for a failed send that never carries the message's secrets: an API that echoes the
 * request (or a transport error quoting the message) must not put the token in a log line.
 */
export function sendError(
  sender: string,
  detail: string,
  params: Pick<SendVerificationRequestParams, 'token' | 'url' | 'code'>,
): Error {
  let safe = detail
  for (const secret of [params.url, params.token, params.code]) {
    if (secret) safe = safe.split(secret).join('[redacted]')
  }
  // Cut only after redacting: a cut through a token would leave a part of it unredacted.
  return new Error(`${sender} error: ${safe.slice(0, 500)}`)
}

/**
 * Sends through an HTTP API and throws a redacted {@link sendError} unless it answers 2xx.
 *
 * @throws {Error} `<sender> error: <status> <body>` when the API refuses the message.
 */
export async function postToApi(
  sender: string,
  params: SendVerificationRequestParams,
  url: string,
  init: RequestInit,
): Promise<void> {
  const response = await fetchOf(params.provider)(url, { method: 'POST', ...init })
  if (!response.ok) {
    const body = await response.text().catch(() => '')
    throw sendError(sender, `${response.status} ${body}`, params)
  }
}

/** The host of the link, for the subject and the message (`Sign in to <host>`). */
export function hostOf(url: string): string {
  return new URL(url).host
}

/** The default message of a sign-in, ready for any sender. */
export interface RenderedMessage {
  to: string
  from: string | undefined
  subject: string
  html: string
  text: string
}

/** Renders the default message (themed, with the code when there is one) for `params`. */
export function renderMessage(params: SendVerificationRequestParams): RenderedMessage {
  const { identifier, provider, url, theme, code } = params
  if (params.notice) {
    const paragraphs = params.notice.text.split(/\n\n+/).map((paragraph) => `<p>${escapeHtml(paragraph)}</p>`)
    return { to: identifier, from: provider.from, subject: params.notice.subject, html: `<body>${paragraphs.join('')}</body>`, text: params.notice.text }
  }
  const host = hostOf(url)
  // A re-authentication's code: the message names the action it confirms, not a sign-in.
  if (params.confirming !== undefined && code !== undefined) {
    return { to: identifier, from: provider.from, ...confirmationMessage({ host, theme, action: params.confirming, code }) }
  }
  const withCode = code !== undefined ? { code } : {}
  return {
    to: identifier,
    from: provider.from,
    subject: `Sign in to ${host}`,
    html: html({ url, host, theme, ...withCode }),
    text: text({ url, host, ...withCode }),
  }
}

/** Sends a rendered message through one HTTP API (a provider file's only code). */
export type ApiSend = (params: SendVerificationRequestParams, message: RenderedMessage) => Promise<void>

/**
 * The factory of an HTTP-API provider: Auth.js's defaults (`from`), the API key from the options or
 * `AUTH_<ID>_KEY`, and `send` given the default message.
 */
export function apiEmailProvider(
  defaults: { id: string; name: string },
  send: ApiSend,
): (options?: EmailUserConfig) => EmailConfig {
  const sendVerificationRequest = (params: SendVerificationRequestParams) => send(params, renderMessage(params))
  return (options = {}) =>
    emailProvider({ ...defaults, type: 'email', from: DEFAULT_FROM, usesApiKey: true, sendVerificationRequest }, options)
}
