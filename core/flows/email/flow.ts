/**
 * The e-mail sign-in flow: the first-factor machine's effects, the scanner-safe confirmation page
 * its links open, and how the sign-in completion stores an e-mail user. Tokens and codes are
 * hashed before anything stores them; what a user can get wrong (a bad address, a used link, a
 * wrong code) is a `*.failed` event with a reason, never an exception.
 *
 * @module
 */
import { EmailSignInContext } from '../../../machines/email-signin.logic.js'
import type { emailSignInMachine } from '../../../machines/email-signin.machine.js'
import { emailSigninChart } from '../../charts/email-signin.js'
import type { SignInCompletionContext } from '../../../machines/signin-completion.machine.js'
import type { AdapterUser } from '../../adapters.js'
import type { FlowContext, RequestContext, ResolvedProvider } from '../../config/types.js'
import type { CookieOption } from '../../cookies.js'
import { sha256Hex, timingSafeEqual } from '../../crypto.js'
import { defaultNormalizer, escapeForLog, isDeliverableAddress } from '../../email/normalize.js'
import type { EmailConfig, ResolvedEmailProvider } from '../../email/provider.js'
import { generateCode, generateToken, hashCode, hashToken, tokenHashCandidates } from '../../email/secrets.js'
import { defineCompiledFlow } from '../../engine/compiled-flow.js'
import { AccountNotLinked, EmailSignInError, Verification, type FlowStateError } from '../../errors.js'
import { NO_STORE_HEADERS } from '../../http/handlers.js'
import { renderEmailConfirmPage } from '../../pages/index.js'
import { askSignIn, signInVerdict } from '../../session/issue.js'
import { effects, fail, reportFailure } from '../effect.js'
import { adapterView } from '../module.js'
import { currentSession } from '../../session/current.js'
import { countAttempt } from '../../store/limits.js'
import { admitMessageTo, recipientLimitOf } from '../../email/send-limit.js'
import type { Account, ResponseInternal, User } from '../../types.js'
import { emitEvent } from '../emit.js'
import type { StoredUser } from '../types.js'
import { isUnverifiedPasskeyUser } from '../passkey-users.js'
import { revokeCachedSessionTokens } from '../../session/cache.js'

/** An e-mail provider as the flow uses it: the merged options and the resolved settings. */
interface EmailProvider {
  id: string
  config: EmailConfig
  settings: ResolvedEmailProvider
}

function emailProviderOf(ctx: RequestContext, providerId: string): EmailProvider {
  const provider = ctx.config.providerById.get(providerId) as ResolvedProvider
  return { id: provider.id, config: provider.config as unknown as EmailConfig, settings: provider.email! }
}

/** The account Auth.js passes to the callbacks for an e-mail sign-in. */
function emailAccount(providerId: string, identifier: string, user: Record<string, unknown>): Account {
  return { providerAccountId: identifier, userId: String(user.id), type: 'email', provider: providerId }
}

/** Keys of the server-side counters; addresses are hashed, so the store never holds them. */
const sendKey = async (providerId: string, kind: 'identifier' | 'address', value: string) =>
  `email:send:${providerId}:${kind}:${await sha256Hex(value)}`
const codeAttemptsKey = (tokenHash: string) => `email:code:${tokenHash}`

/**
 * An error as thrown by a sender, rewritten so that no line of it (message or stack) carries the
 * link, the token or the code: a custom `sendVerificationRequest` may well quote its input.
 */
function redacted(error: unknown, secrets: readonly (string | undefined)[]): Error {
  const scrub = (text: string) => {
    let out = text
    for (const secret of secrets) if (secret) out = out.split(secret).join('[redacted]')
    return out
  }
  const original = error instanceof Error ? error : new Error(String(error))
  const copy = new Error(scrub(original.message))
  copy.name = original.name
  copy.stack = original.stack ? scrub(original.stack) : copy.stack
  return copy
}

/** The client's address from the configured trusted header (its first entry), if any. */
function clientAddress(ctx: RequestContext, header: string | null): string | undefined {
  if (header === null) return undefined
  const value = ctx.request.headers.get(header)?.split(',')[0]?.trim()
  return value ? value : undefined
}

const requestEmail = (trigger: { email?: unknown }): unknown => trigger.email

/**
 * Stores an e-mail user once the address is verified (reference §5.2, callback step 4): an existing
 * user gets `emailVerified` now (`events.updateUser`), and a database session of someone else in
 * this browser is ended; otherwise the user is created verified (`events.createUser`, a new user).
 * No account row is linked, as in Auth.js. A user signed up with a passkey for an address nobody
 * verified is refused (`AccountNotLinked`), never adopted: see {@link isUnverifiedPasskeyUser}.
 */
export async function storeEmailUser(ctx: RequestContext, context: SignInCompletionContext): Promise<StoredUser> {
  const adapter = ctx.config.adapter!
  const verified = context.user as unknown as AdapterUser
  const account = context.account as unknown as Account
  const existing = await adapter.getUserByEmail!(verified.email)
  let user: AdapterUser
  let isNewUser = false
  if (existing && (await isUnverifiedPasskeyUser(adapter, existing))) {
    ctx.logger.error(
      new AccountNotLinked('The account with this e-mail address signed up with a passkey and never verified the address', {
        provider: context.providerId,
      }),
    )
    return { notLinked: 'AccountNotLinked' }
  }
  if (existing) {
    // Signing in as another user replaces this browser's database session rather than sharing it.
    const current = ctx.config.session.strategy === 'database' ? await currentSession(ctx) : null
    if (current && current.user.id !== String(existing.id)) {
      await revokeCachedSessionTokens(ctx.config, [current.value], ctx.at)
      await adapter.deleteSession!(current.value)
    }
    user = await adapter.updateUser!({ id: existing.id, emailVerified: new Date(ctx.at * 1000) })
    await emitEvent(ctx, 'updateUser', { user })
  } else {
    user = await adapter.createUser!({ ...verified, emailVerified: new Date(ctx.at * 1000) })
    await emitEvent(ctx, 'createUser', { user })
    isNewUser = true
  }
  return {
    user: user as unknown as Record<string, unknown>,
    account: { ...account, userId: String(user.id) },
    isNewUser,
  }
}

/**
 * GET on a sign-in link, in the default `confirm` mode: the "Sign in as …" page, which changes
 * nothing. Its button posts the token back with a CSRF token; only that POST spends the link, so
 * mail scanners and link previews that fetch it cannot. `direct` providers (and a link without a
 * token) go on to the flow.
 */
export async function confirmLinkPage(
  ctx: RequestContext,
  query: Record<string, string>,
): Promise<ResponseInternal | undefined> {
  const provider = emailProviderOf(ctx, ctx.provider!.id)
  if (provider.settings.link === 'direct' || !query.token) return undefined
  const page = renderEmailConfirmPage({
    theme: ctx.config.theme,
    csrfToken: ctx.csrf!.token,
    actionUrl: `${ctx.authUrl}/callback/${provider.id}`,
    email: query.email ?? '',
    token: query.token,
    callbackUrl: ctx.callbackUrl,
  })
  return {
    status: page.status,
    // The page's URL holds the token: keep it out of caches and out of any Referer header.
    headers: { 'Content-Type': 'text/html', ...NO_STORE_HEADERS, 'Referrer-Policy': 'no-referrer' },
    body: page.html,
    cookies: ctx.setCookies,
  }
}

/**
 * A code posted without a flow this browser can resume (another browser, an expired, spent or
 * forged cookie) is reported as `Verification`, as a spent link is: the user asks again.
 */
export function refusedCode(_ctx: RequestContext, error: FlowStateError): Error {
  return new Verification(`No sign-in waits for a code in this browser: ${error.message}`)
}

/** One-time code settings: how a code looks and how many wrong tries it allows. */
export type CodeSettings = NonNullable<ResolvedEmailProvider['code']>

/** A sign-in message to send: to whom, where its link leads, and whether a code goes with it. */
export interface SignInMessage {
  providerId: string
  identifier: string
  callbackUrl: string
  /** The code to add (its settings), or `null` for a link alone. */
  code: CodeSettings | null
}

/** The context the e-mail effects receive: the verification tokens and the user, in the adapter. */
type Env = FlowContext<'getUserByEmail' | 'createVerificationToken' | 'useVerificationToken'>

/**
 * Stores a sign-in token's hash, then sends the message with its link (and code) through the
 * provider's `sendVerificationRequest`: the one mailer of every message the flows send, e-mail
 * sign-ins and passkey sign-ups alike. Codes leave only as their hash, bound to the token.
 */
export async function sendSignInMessage(ctx: Env, message: SignInMessage) {
  const { id, config, settings } = emailProviderOf(ctx, message.providerId)
  const { identifier } = message
  const token = (await config.generateVerificationToken?.()) ?? generateToken()
  const expiresAt = ctx.at + settings.maxAge
  const expires = new Date(expiresAt * 1000)
  const tokenHash = await hashToken(token, config.secret ?? ctx.config.secrets[0])
  const code = message.code ? generateCode(message.code.length, message.code.alphabet) : undefined
  const url = `${ctx.authUrl}/callback/${id}?${new URLSearchParams({ callbackUrl: message.callbackUrl, token, email: identifier })}`
  // Stored before it is sent: a link that arrives always works.
  await ctx.adapter.createVerificationToken({ identifier, token: tokenHash, expires })
  try {
    await config.sendVerificationRequest({
      identifier,
      token,
      expires,
      url,
      provider: config,
      theme: ctx.config.theme,
      request: ctx.raw,
      ...(code !== undefined ? { code } : {}),
    })
  } catch (error) {
    ctx.logger.error(new EmailSignInError(redacted(error, [url, token, code])))
    return fail('notSent', { error: 'EmailSignInError' })
  }
  const verifyRequestUrl = `${ctx.authUrl}/verify-request?${new URLSearchParams({ provider: id, type: 'email' })}`
  return {
    verifyRequestUrl,
    code: code === undefined ? null : { tokenHash, codeHash: await hashCode(code, tokenHash), expires: expiresAt },
  }
}

/** A typed code to check against the one a message carried. */
export interface CodeCheck {
  providerId: string
  /** The hash of the token the code stands for. */
  tokenHash: string
  /** The code's hash, bound to `tokenHash`. */
  codeHash: string
  /** When the code expires, epoch seconds. */
  expires: number
  /** Wrong codes allowed before the token is void. */
  attempts: number
  /** What was typed, as posted (anything but a string is wrong). */
  typed: unknown
}

/**
 * Checks a typed one-time code: expired codes are refused, every attempt is counted on the server
 * before the comparison, and the last allowed wrong one exhausts the token.
 */
export async function checkSignInCode(ctx: RequestContext, check: CodeCheck) {
  const { settings } = emailProviderOf(ctx, check.providerId)
  const { tokenHash } = check
  const limit = check.attempts
  if (ctx.at >= check.expires) {
    ctx.logger.error(new Verification('The one-time code has expired'))
    return fail('expired', { error: 'Verification' })
  }
  // Counted on the server before the comparison, keyed by the token: an older copy of the
  // flow cookie carries the same token hash, so replaying it cannot reset the count.
  // A fixed lifetime (the code's whole life, which outlasts what is left of it) keeps one
  // counter per token in stores that group counters by lifetime.
  const attempt = await ctx.config.store.increment(codeAttemptsKey(tokenHash), settings.maxAge)
  if (attempt > limit) {
    ctx.logger.error(new Verification(`Too many wrong one-time codes (${limit})`))
    return fail('exhausted', { error: 'Verification' })
  }
  const { typed } = check
  // Stryker disable next-line StringLiteral: eq#email-code-not-text
  const hash = await hashCode(typeof typed === 'string' ? typed : '', tokenHash)
  if (timingSafeEqual(hash, check.codeHash)) return null
  if (attempt >= limit) {
    ctx.logger.error(new Verification(`Too many wrong one-time codes (${limit})`))
    return fail('exhausted', { error: 'Verification' })
  }
  ctx.logger.debug('email_code_rejected', { attempt, limit })
  return fail('wrong', { error: 'Verification' })
}

/** A code's token, as the effects read it from their context. */
interface CodeToken {
  providerId: string
  identifier: string
  tokenHash: string
}

/**
 * Normalises an address and counts one more message to it against the provider's send limits: an
 * e-mail sign-in request's effect, and a passkey sign-up's, so that its code cannot dodge the
 * limits of the mailbox it goes to.
 */
export async function admitAddress(ctx: RequestContext, providerId: string, input: unknown) {
  const { id, config, settings } = emailProviderOf(ctx, providerId)
  let identifier: string
  if (typeof input !== 'string') {
    // The request binding passes anything but text as null: a field missing, or an object or list.
    ctx.logger.error(new EmailSignInError('Refused the request: its "email" field is missing or not text'))
    // Stryker disable next-line StringLiteral: eq#email-failure-reason
    return fail('invalidIdentifier', { error: 'EmailSignInError' })
  }
  try {
    identifier = (config.normalizeIdentifier ?? defaultNormalizer)(input)
    if (typeof identifier !== 'string' || !isDeliverableAddress(identifier)) {
      throw new Error('Invalid email address format.')
    }
  } catch (error) {
    ctx.logger.error(
      new EmailSignInError(`Refused the address "${escapeForLog(input)}": ${escapeForLog((error as Error)?.message)}`),
    )
    // Stryker disable next-line StringLiteral: eq#email-failure-reason
    return fail('invalidIdentifier', { error: 'EmailSignInError' })
  }
  const throttle = settings.throttle
  if (throttle) {
    const { store } = ctx.config
    // One counter per inbox for every message we send it, whatever the flow (core/email/send-limit.ts).
    const toRecipient = await admitMessageTo(ctx, identifier, 'email', recipientLimitOf(settings))
    const address = clientAddress(ctx, throttle.addressHeader)
    const fromAddress = address === undefined ? 0 : await countAttempt(store, await sendKey(id, 'address', address), throttle.window, throttle.failOpen, ctx.logger)
    if (!toRecipient.admitted || fromAddress > throttle.perAddress) {
      if (toRecipient.admitted) ctx.logger.warn('email-send-throttled')
      ctx.logger.error(
        new EmailSignInError(
          !toRecipient.admitted
            ? `Too many sign-in e-mails to one address (${throttle.perIdentifier} per ${throttle.window} s)`
            : `Too many sign-in e-mails from one client (${throttle.perAddress} per ${throttle.window} s)`,
        ),
      )
      // Stryker disable next-line StringLiteral: eq#email-failure-reason
      return fail('throttled', { error: 'EmailSignInError' })
    }
  }
  return { identifier }
}

/** Spends the token a right code stood for (its link dies with it), as a code sign-in does. */
export async function spendCodeToken(ctx: Env, token: CodeToken) {
  return spendToken(ctx, [token.tokenHash], token.identifier)
}

/**
 * Spends a sign-in token: the first of `candidates` (hashes under each secret) the adapter still
 * holds, if it belongs to `identifier` (when a link names one) and has not expired.
 */
async function spendToken(ctx: Env, candidates: readonly string[], identifier: string | undefined) {
  let invite = null
  for (const token of candidates) {
    invite = await ctx.adapter.useVerificationToken({ identifier: identifier as string, token })
    if (invite) break
  }
  const expired = invite !== null && new Date(invite.expires).getTime() <= ctx.at * 1000
  // A link may omit the address; when it names one, it must be the token's.
  if (invite === null || expired || (identifier !== undefined && invite.identifier !== identifier)) {
    ctx.logger.error(new Verification({ hasInvite: invite !== null, expired }))
    return fail('invalid', { error: 'Verification' })
  }
  return { identifier: invite.identifier }
}

/** Spends the token of a code got wrong too often, so neither the code nor the link works. */
export async function voidCodeToken(ctx: Env, token: CodeToken): Promise<null> {
  try {
    await ctx.adapter.useVerificationToken({ identifier: token.identifier, token: token.tokenHash })
  } catch (error) {
    // The attempt counter already refuses every further code; the link expires on its own.
    reportFailure(ctx, error)
  }
  return null
}

/** The e-mail sign-in's effects. */
export const emailEffects = effects<typeof emailSignInMachine, Env>(emailSigninChart, {
  admitRequest: (context, ctx, trigger) => admitAddress(ctx, context.providerId, requestEmail(trigger as { email?: unknown })),

  async lookUpUser(context, { adapter }) {
    const identifier = context.identifier!
    const stored = await adapter.getUserByEmail(identifier)
    const user = stored ?? { id: crypto.randomUUID(), email: identifier, emailVerified: null }
    return { user: user as unknown as Record<string, unknown>, stored: stored !== null }
  },

  async checkSignIn(context, ctx) {
    const user = context.user!
    return signInVerdict(
      await askSignIn(ctx, {
        user: user as User,
        account: emailAccount(context.providerId, context.identifier!, user),
        email: { verificationRequest: true },
      }),
    )
  },

  sendVerificationRequest(context, ctx) {
    const { settings } = emailProviderOf(ctx, context.providerId)
    const { providerId, callbackUrl } = context
    return sendSignInMessage(ctx, { providerId, identifier: context.identifier!, callbackUrl, code: settings.code })
  },

  checkCode(context, ctx, trigger) {
    const { settings } = emailProviderOf(ctx, context.providerId)
    return checkSignInCode(ctx, {
      providerId: context.providerId,
      tokenHash: context.tokenHash!,
      codeHash: context.codeHash!,
      expires: context.expires,
      attempts: settings.code!.attempts,
      typed: (trigger as { code?: unknown }).code,
    })
  },

  voidToken: (context, ctx) =>
    voidCodeToken(ctx, { providerId: context.providerId, identifier: context.identifier!, tokenHash: context.tokenHash! }),

  async consumeToken(context, ctx, trigger) {
    const { config } = emailProviderOf(ctx, context.providerId)
    const link = trigger as { type: string; token?: unknown; email?: unknown }
    if (link.type !== 'email.verifyLink') return spendToken(ctx, [context.tokenHash!], context.identifier!)
    // Stryker disable next-line ConditionalExpression: eq#email-link-token-text
    if (typeof link.token !== 'string' || link.token === '') {
      const missing = new Error(
        'Missing token. The sign-in URL was manually opened without token or the link was not sent correctly in the email.',
      )
      missing.name = 'Configuration'
      ctx.logger.error(missing)
      // Stryker disable next-line StringLiteral: eq#email-failure-reason
      return fail('missingToken')
    }
    const candidates = await tokenHashCandidates(link.token, config.secret ? [config.secret] : ctx.config.secrets)
    return spendToken(ctx, candidates, typeof link.email === 'string' && link.email !== '' ? link.email : undefined)
  },
})

/** The e-mail sign-in flow definition. */
export const emailSignInFlow = defineCompiledFlow<typeof emailSignInMachine, RequestContext>({
  chart: emailSigninChart,
  context: EmailSignInContext,
  effects: adapterView(emailEffects),
})

/** The cookie an e-mail sign-in rests in while a code is awaited: `<flowState name>.email-signin`. */
export function emailEnvelopeCookie(ctx: RequestContext): CookieOption {
  return { ...ctx.cookies.flowState, name: `${ctx.cookies.flowState.name}.${emailSigninChart.id}` }
}
