/**
 * The types of e-mail providers: the options an application gives and the settings the flow runs
 * on. A leaf (shapes and type-only imports), so the public config types can name them without an
 * import circle.
 *
 * @module
 */
import type { customFetch } from '../symbols.js'
import type { Awaitable, CommonProviderOptions, Theme, UserOptions } from '../shapes.js'

/** The alphabets a one-time code may use. */
export type CodeAlphabet = 'base32' | 'digits'

/** What `sendVerificationRequest` receives (Auth.js's parameters, plus `code`). */
export interface SendVerificationRequestParams {
  /** The normalised address to send to. */
  identifier: string
  /** The link: `<origin><basePath>/callback/<id>?callbackUrl=…&token=…&email=…`. */
  url: string
  expires: Date
  /** The merged provider, with `from`, `server`, `apiKey`, … */
  provider: EmailConfig
  /** The link's token in clear: it exists only in the message. Never log it. */
  token: string
  /** The one-time code, when the provider sends codes. Never log it. */
  code?: string
  /**
   * Ours: set when the message is a re-authentication's code, to the action it confirms ("sign
   * out everywhere, this browser too"). The default message then says so instead of "Sign in to …";
   * a sender of your own should too. `url` is then the page that asked, and signs no one in.
   */
  confirming?: string
  theme: Theme
  request: Request
  /**
   * Ours, optional: this message is a notice to the account's owner, not a sign-in (someone who
   * knows the password is trying second-factor codes). Send `subject` and `text` instead of the
   * sign-in message; `url` is then the sign-in page and `token` signs no one in. The default
   * message of every built-in sender does so.
   */
  notice?: EmailNotice
}

/** A notice to the owner of an address (see {@link SendVerificationRequestParams.notice}). */
export interface EmailNotice {
  /** What it is about, for senders that tell notices apart. */
  kind: 'second-factor-codes-tried'
  subject: string
  /** Plain text, paragraphs separated by blank lines. */
  text: string
}

/** Sends the sign-in message; throwing makes the sign-in fail with `EmailSignin`. */
export type SendVerificationRequest = (params: SendVerificationRequestParams) => Awaitable<void>

/** One-time codes (ours, opt-in): sent in the same message as the link. */
export interface EmailCodeOptions {
  /** Characters, 6 to 8. Default 6. */
  length?: number
  /**
   * `base32` (Crockford's: digits and letters without I, L, O, U; default) or `digits`. A code
   * must carry at least 20 bits, so digits need a length of at least 7.
   */
  alphabet?: CodeAlphabet
  /** Wrong codes allowed before the sign-in is void, counted on the server. Default 5. */
  attempts?: number
}

/** Send limits (ours, on by default): sends per window, per address and per client. */
export interface EmailThrottleOptions {
  /** Messages per identifier (e-mail address) per window. Default 5. */
  perIdentifier?: number
  /** Messages per client address per window. Default 30; needs `addressHeader`. */
  perAddress?: number
  /** The window, seconds. Default 900 (15 minutes). */
  window?: number
  /**
   * A request header holding the client's address that your proxy or integration sets and clients
   * cannot set themselves (`x-real-ip` behind nginx with `proxy_set_header X-Real-IP
   * $remote_addr`, `cf-connecting-ip` behind Cloudflare). Without it there is no per-client
   * limit: a header the client controls would let it dodge the limit or exhaust someone else's.
   */
  addressHeader?: string
  /**
   * When the store cannot count a send (it is down): `false` (default) refuses the request with
   * 503 and `Retry-After`; `true` sends uncounted, with a `rate-limit-unchecked` warning.
   */
  failOpen?: boolean
}

/** An e-mail provider, as Auth.js's `EmailConfig`, with our additions marked. */
export interface EmailConfig extends CommonProviderOptions {
  type: 'email'
  sendVerificationRequest: SendVerificationRequest
  /** Seconds a link (and its code) stays valid. Default 86400, or 600 with codes. */
  maxAge?: number
  /** The sender, e.g. `Example <no-reply@example.com>`. */
  from?: string
  /** SMTP server (Nodemailer): a connection URL or Nodemailer's transport options. */
  server?: string | Record<string, unknown>
  /** HTTP senders: the API key (else `AUTH_<ID>_KEY`). */
  apiKey?: string
  /** Hashes the token instead of `config.secret`. */
  secret?: string
  generateVerificationToken?: () => Awaitable<string>
  normalizeIdentifier?: (identifier: string) => string
  /**
   * Ours. `confirm` (default): opening the link shows a "Sign in as …" page whose button (a
   * CSRF-checked POST) signs in, so a mail scanner that follows links cannot spend the link.
   * `direct`: Auth.js's one-click GET, which any link scanner spends.
   */
  link?: 'confirm' | 'direct'
  /** Ours: also send a one-time code, entered on the verify-request page of the same browser. */
  code?: boolean | EmailCodeOptions
  /** Ours: send limits; `false` turns them off. */
  throttle?: false | EmailThrottleOptions
  /** Mailgun: the API region, `US` (default) or `EU`. */
  region?: 'US' | 'EU'
  [customFetch]?: typeof fetch
  options?: Record<string, unknown>
}

/** Options accepted by the provider factories: every field optional. */
export type EmailUserConfig = UserOptions<Omit<EmailConfig, 'options' | 'type'>>

/** An e-mail provider's settings after defaults and validation. */
export interface ResolvedEmailProvider {
  readonly maxAge: number
  readonly link: 'confirm' | 'direct'
  readonly code: { readonly length: number; readonly alphabet: CodeAlphabet; readonly attempts: number } | null
  readonly throttle: {
    readonly perIdentifier: number
    readonly perAddress: number
    readonly window: number
    readonly addressHeader: string | null
    readonly failOpen: boolean
  } | null
}
