/**
 * The WebAuthn (passkey) flow: the machine's effects, the relying party, and how the sign-in
 * completion stores a passkey user. Every ceremony step goes through `@simplewebauthn/server`
 * (loaded on first use, so applications without passkeys never load it); this module decides what
 * to ask, what a failure means for the user, and what is stored.
 *
 * A refused answer (malformed, replayed, for another challenge, origin or RP id, an unknown
 * credential, a counter that did not grow) is logged as `WebAuthnVerificationError` and ends in
 * `rejected`; an outage (the database) ends in `failed`.
 *
 * A sign-up's address is verified, when an e-mail provider is configured, by the e-mail flow's own
 * parts: its normaliser and send limits, its mailer, its code checks and its single-use tokens.
 *
 * @module
 */
import { WebAuthnSignInContext, type WebAuthnSignInContext as Context } from '../../../machines/webauthn-signin.logic.js'
import type { webauthnSignInMachine } from '../../../machines/webauthn-signin.machine.js'
import { webauthnSigninChart } from '../../charts/webauthn-signin.js'
import type { SignInCompletionContext } from '../../../machines/signin-completion.machine.js'
import type { Adapter, AdapterAccount, AdapterAuthenticator, AdapterUser } from '../../adapters.js'
import type { FlowContext, RequestContext, ResolvedConfig } from '../../config/types.js'
import type { CookieOption } from '../../cookies.js'
import { DEFAULT_CODE } from '../../email/defaults.js'
import { ENVELOPE_MAX_AGE } from '../../engine/envelope.js'
import { defineCompiledFlow } from '../../engine/compiled-flow.js'
import { AccountNotLinked, AdapterError, AuthError, WebAuthnVerificationError } from '../../errors.js'
import { effects, fail, isFailure } from '../effect.js'
import { adapterView } from '../module.js'
import { signedInAdapterUser } from '../../session/current.js'
import type { Account } from '../../types.js'
import {
  SIMPLEWEBAUTHN,
  type Helpers,
  type RelyingParty,
  type SimpleWebAuthn,
  type SimpleWebAuthnLoader,
  type WebAuthnConfig,
  type WebAuthnRequest,
  type WebAuthnUserInfo,
} from './types.js'

export { SIMPLEWEBAUTHN }
export type { RelyingParty, SimpleWebAuthnLoader, WebAuthnConfig, WebAuthnRequest, WebAuthnUserInfo }
import { admitAddress, checkSignInCode, sendSignInMessage, spendCodeToken, voidCodeToken } from '../email/flow.js'
import { emitEvent } from '../emit.js'
// Asked by every first factor that adopts users by address; kept apart so they need not load this flow.
export { isUnverifiedPasskeyUser } from '../passkey-users.js'

// The sign-in page's passkey block (with the browser library, inline) comes with this flow.
export { passkeyForm, passkeyScripts } from '../../pages/webauthn.js'
export { SIMPLEWEBAUTHN_BROWSER } from '../../pages/simplewebauthn-browser.js'
import type { StoredUser } from '../types.js'


// A provider written as a plain object loads the library through a specifier bundlers leave to the
// runtime: that works from an unbundled install (the library is a dependency of this package).
const SERVER = '@simplewebauthn/server'
const HELPERS = '@simplewebauthn/server/helpers'
const importAtRuntime: SimpleWebAuthnLoader = () =>
  Promise.all([
    import(/* webpackIgnore: true */ /* @vite-ignore */ SERVER) as Promise<SimpleWebAuthn>,
    import(/* webpackIgnore: true */ /* @vite-ignore */ HELPERS) as Promise<Helpers>,
  ])

let server: Promise<[SimpleWebAuthn, Helpers]> | undefined

/** `@simplewebauthn/server`, imported once on first use (it is large; most apps have no passkeys). */
function simpleWebAuthn(provider: WebAuthnConfig): Promise<[SimpleWebAuthn, Helpers]> {
  server ??= (provider[SIMPLEWEBAUTHN] ?? importAtRuntime)().catch((error: unknown) => {
    server = undefined
    throw error
  })
  return server
}

/**
 * The cookie carrying the sealed WebAuthn flow, with its challenge: `cookies.webauthnChallenge`
 * (`authjs.challenge`, 15 minutes), as Auth.js names it.
 */
export function webauthnEnvelopeCookie(ctx: RequestContext): CookieOption {
  return ctx.cookies.webauthnChallenge
}

/**
 * The e-mail provider that verifies a passkey sign-up's address: the first one configured, if any.
 * Without one, nothing can verify it.
 */
export function signUpVerifier(config: ResolvedConfig): string | null {
  return config.providers.find((provider) => provider.type === 'email')?.id ?? null
}

/** The code settings of a sign-up's code: the verifier's own, or the defaults when it sends links only. */
function signUpCode(ctx: RequestContext, verifier: string) {
  return ctx.config.providerById.get(verifier)!.email!.code ?? DEFAULT_CODE
}

/** The e-mail token of a sign-up's code, as the e-mail flow's effects read it. */
function codeToken(context: Context) {
  return { providerId: context.verifier!, identifier: String(context.user!.email), tokenHash: context.tokenHash! }
}

function providerOf(ctx: RequestContext, providerId: string): WebAuthnConfig {
  return ctx.config.providerById.get(providerId)!.config as unknown as WebAuthnConfig
}

function requestOf(ctx: RequestContext): WebAuthnRequest {
  const { url, method, headers, query, body } = ctx.request
  return { url, method, headers, query, ...(body ? { body } : {}) }
}

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)

/** The relying party's id and name, and every origin a response may come from. */
export function relyingParty(ctx: RequestContext, provider: WebAuthnConfig): { id: string; name: string; origins: string[] } {
  const url = ctx.request.url
  if (provider.getRelayingParty) {
    const rp = provider.getRelayingParty({ provider, url }, requestOf(ctx))
    return { id: rp.id, name: rp.name, origins: [rp.origin] }
  }
  const configured = provider.relayingParty
  const origins = configured?.origin === undefined ? [] : [configured.origin].flat()
  return {
    id: first(configured?.id) ?? url.hostname,
    name: first(configured?.name) ?? url.host,
    origins: origins.length > 0 ? origins : [ctx.origin],
  }
}

/** Auth.js's default `getUserInfo`: the stored user of the `email` query (body for POST) value. */
async function defaultUserInfo(adapter: Adapter, request: WebAuthnRequest): Promise<WebAuthnUserInfo | null> {
  const email = request.method === 'POST' ? request.body?.email : request.query.email
  if (!email || typeof email !== 'string') return null
  const existing = await adapter.getUserByEmail!(email)
  return existing ? { user: existing as unknown as WebAuthnUserInfo['user'], exists: true } : { user: { email }, exists: false }
}

/** The fields of a user the flow keeps while it rests: plain strings, nothing else sealed. */
function userFields(user: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  if (user.id !== undefined && user.id !== null) out.id = String(user.id)
  for (const key of ['email', 'name', 'image'] as const) {
    if (typeof user[key] === 'string') out[key] = user[key]
  }
  return out
}

/** The browser's answer, when it is an object naming its credential. */
function parseAnswer(text: string | null): ({ id: string; response?: Record<string, unknown> } & Record<string, unknown>) | null {
  try {
    const parsed = JSON.parse(text ?? '') as unknown
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null
    const answer = parsed as Record<string, unknown>
    return typeof answer.id === 'string' && answer.id !== '' ? (answer as { id: string }) : null
  } catch {
    return null
  }
}

/** Adapter ids are base64 (Auth.js's stored format); the browser speaks base64url. */
const toStoredId = (helpers: Helpers, base64url: string) => helpers.isoBase64URL.toBase64(base64url)
const toBrowserId = (helpers: Helpers, base64: string) =>
  helpers.isoBase64URL.fromBuffer(helpers.isoBase64URL.toBuffer(base64, 'base64'))
const toTransports = (transports: string | null | undefined) =>
  transports ? (transports.split(',') as ('internal' | 'hybrid' | 'usb' | 'nfc' | 'ble' | 'cable' | 'smart-card')[]) : undefined

/** A known user's passkeys as credential descriptors; none for a request about nobody known. */
async function passkeysOf(ctx: RequestContext, helpers: Helpers, userId: unknown) {
  if (typeof userId !== 'string') return undefined
  const authenticators = await ctx.config.adapter!.listAuthenticatorsByUserId!(userId)
  return authenticators.map((a) => ({
    id: toBrowserId(helpers, a.credentialID),
    ...(a.transports ? { transports: toTransports(a.transports) } : {}),
  }))
}

const optionsCreated = (options: { challenge: string }) => ({ options: { ...options }, challenge: options.challenge })

/** Logs why an answer was refused and returns the refusal for the chart. */
function refuse<R extends string>(ctx: RequestContext, reason: R, cause: string | Error) {
  ctx.logger.error(new WebAuthnVerificationError(cause))
  return fail(reason, { error: 'WebAuthnVerificationError' })
}

/** The authenticator as the chart keeps it (plain JSON). */
function storedAuthenticator(a: AdapterAuthenticator): Record<string, unknown> {
  return {
    credentialID: a.credentialID,
    userId: a.userId,
    providerAccountId: a.providerAccountId,
    counter: Number(a.counter),
    credentialBackedUp: a.credentialBackedUp,
    credentialPublicKey: a.credentialPublicKey,
    credentialDeviceType: a.credentialDeviceType,
    ...(a.transports ? { transports: a.transports } : {}),
  }
}

/**
 * Stores a passkey sign-in's user (reference §5.4). An assertion signs in the passkey's user,
 * refused when someone else is signed in. A registration links the new passkey's account and
 * stores the authenticator: for a signed-in user adding a passkey, only while the same user is
 * still signed in; for a sign-up, a new user, refused when the e-mail address is already taken
 * (a typed address is never trusted to link). Refusals are `AccountNotLinked`.
 */
export async function storeWebAuthnUser(ctx: RequestContext, context: SignInCompletionContext): Promise<StoredUser> {
  const adapter = ctx.config.adapter!
  const account = context.account as unknown as Account
  const notLinked = (message: string): StoredUser => {
    ctx.logger.error(new AccountNotLinked(message, { provider: context.providerId }))
    return { notLinked: 'AccountNotLinked' }
  }
  const signedIn = await signedInAdapterUser(ctx)
  const owner = context.storedUser as unknown as AdapterUser | null
  if (!context.enrolment) {
    if (signedIn && String(signedIn.id) !== String(owner!.id)) {
      return notLinked('The account is already associated with another user')
    }
    return { user: { ...owner! }, account: { ...account, userId: String(owner!.id) }, isNewUser: false }
  }
  let user: AdapterUser
  let isNewUser = false
  if (owner) {
    if (!signedIn || String(signedIn.id) !== String(owner.id)) {
      return notLinked('The passkey was requested by a user who is no longer signed in')
    }
    user = signedIn
  } else {
    if (signedIn) return notLinked('The passkey was requested for a new account, but a user is signed in')
    const profile = context.user as { email: string; name?: string; emailVerified?: string }
    if (await adapter.getUserByEmail!(profile.email)) {
      return notLinked('Another account already exists with the same e-mail address')
    }
    user = await adapter.createUser!({
      id: crypto.randomUUID(),
      email: profile.email,
      // Verified only when a code sent to it came back: then its owner made the passkey.
      emailVerified: typeof profile.emailVerified === 'string' ? new Date(profile.emailVerified) : null,
      ...(typeof profile.name === 'string' ? { name: profile.name } : {}),
    } as AdapterUser)
    await emitEvent(ctx, 'createUser', { user })
    isNewUser = true
  }
  const linked = { ...account, userId: String(user.id) } as AdapterAccount
  await adapter.linkAccount!(linked)
  await emitEvent(ctx, 'linkAccount', { user, account, profile: user })
  await adapter.createAuthenticator!({
    ...(context.enrolment as unknown as AdapterAuthenticator),
    userId: String(user.id),
  })
  return { user: user as unknown as Record<string, unknown>, account: { ...linked }, isNewUser }
}

/**
 * Assertion options for a ceremony about `userId`: `allowCredentials` lists that user's passkeys
 * only (a request about nobody known lists none, and the browser offers any passkey of the RP).
 */
export async function passkeyRequestOptions(ctx: RequestContext, provider: WebAuthnConfig, userId: unknown) {
  const [{ generateAuthenticationOptions }, helpers] = await simpleWebAuthn(provider)
  return generateAuthenticationOptions({
    ...provider.authenticationOptions,
    rpID: relyingParty(ctx, provider).id,
    allowCredentials: await passkeysOf(ctx, helpers, userId),
  })
}

/**
 * Spends a WebAuthn challenge in the store: `true` the first time only. An envelope opens once per
 * process; the store makes the challenge single-use on every instance that shares it.
 */
export function spendWebAuthnChallenge(ctx: RequestContext, challenge: string): Promise<boolean> {
  return ctx.config.store.claim(`webauthn-challenge:${challenge}`, ENVELOPE_MAX_AGE)
}

/** The stored authenticator an assertion names, or the refusal (logged) when the answer names none known. */
export async function findAssertedAuthenticator(ctx: RequestContext, provider: WebAuthnConfig, response: string | null) {
  const answer = parseAnswer(response)
  if (!answer) {
    return refuse(
      ctx,
      // Stryker disable next-line StringLiteral: eq#webauthn-refusal-reason
      'invalid',
      'Invalid WebAuthn Authentication response',
    )
  }
  const [, helpers] = await simpleWebAuthn(provider)
  const credentialID = toStoredId(helpers, answer.id)
  const authenticator = await ctx.config.adapter!.getAuthenticator!(credentialID)
  if (!authenticator) {
    const message = `WebAuthn authenticator not found in database: ${JSON.stringify({ credentialID })}`
    // Stryker disable next-line StringLiteral: eq#webauthn-refusal-reason
    return refuse(ctx, 'unknown', message)
  }
  return { authenticator: storedAuthenticator(authenticator) }
}

/**
 * Verifies an assertion by `stored` against `challenge`, the relying party's id and its origins;
 * gives the authenticator's new counter, or the refusal (logged).
 */
export async function verifyPasskeyAssertion(
  ctx: RequestContext,
  provider: WebAuthnConfig,
  response: string | null,
  challenge: string,
  stored: AdapterAuthenticator,
) {
  try {
    const [{ verifyAuthenticationResponse }, helpers] = await simpleWebAuthn(provider)
    const rp = relyingParty(ctx, provider)
    const transports = toTransports(stored.transports)
    const { verified, authenticationInfo } = await verifyAuthenticationResponse({
      ...provider.verifyAuthenticationOptions,
      response: parseAnswer(response) as never,
      expectedChallenge: challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      credential: {
        id: toBrowserId(helpers, stored.credentialID),
        // Stryker disable next-line StringLiteral: eq#webauthn-base64-format
        publicKey: helpers.isoBase64URL.toBuffer(stored.credentialPublicKey, 'base64'),
        counter: stored.counter,
        // Stryker disable next-line ObjectLiteral: eq#webauthn-assertion-transports
        ...(transports ? { transports } : {}),
      },
    })
    if (!verified) throw new Error('WebAuthn authentication response could not be verified')
    return { newCounter: authenticationInfo.newCounter }
  } catch (error) {
    // Stryker disable next-line StringLiteral: eq#webauthn-refusal-reason
    return refuse(ctx, 'invalid', assertionRefusal(error as Error))
  }
}

/** `@simplewebauthn/server`'s counter refusal, which says "lower" of a counter that only stayed put. */
const COUNTER_REFUSAL = /^Response counter value (\d+) was lower than expected (\d+)$/

/**
 * What an assertion's refusal says in the log: the library's own words, but for its counter check,
 * which is reworded to say what it found (the counter did not increase) and what that suggests.
 */
function assertionRefusal(error: Error): Error {
  const counter = COUNTER_REFUSAL.exec(error.message)
  if (counter === null) return error
  const [, received, stored] = counter
  return new Error(
    `The passkey's signature counter did not increase (received ${received}, stored ${stored}): the authenticator may be cloned, or the assertion replayed`,
    { cause: error },
  )
}

/**
 * Stores the counter a verified assertion reported.
 *
 * @throws {AdapterError} when the adapter cannot (a later assertion could then be refused).
 */
export async function updatePasskeyCounter(ctx: RequestContext, stored: AdapterAuthenticator, newCounter: number): Promise<void> {
  try {
    await ctx.config.adapter!.updateAuthenticatorCounter!(stored.credentialID, newCounter)
  } catch (error) {
    const details = { credentialID: stored.credentialID, oldCounter: stored.counter, newCounter }
    const message = `Failed to update authenticator counter. This may cause future authentication attempts to fail. ${JSON.stringify(details)}`
    throw new AdapterError(message, error as Error)
  }
}

/** The context the WebAuthn effects receive: the passkeys and their accounts, in the adapter. */
type Env = FlowContext<
  'getUser' | 'getAccount' | 'getAuthenticator' | 'listAuthenticatorsByUserId' | 'updateAuthenticatorCounter'
>

/** The WebAuthn flow's effects. */
export const webauthnEffects = effects<typeof webauthnSignInMachine, Env>(webauthnSigninChart, {
  async findUser(context, ctx) {
    const provider = providerOf(ctx, context.providerId)
    const signedIn = await signedInAdapterUser(ctx)
    if (signedIn) {
      return { signedIn: true, user: userFields(signedIn as unknown as Record<string, unknown>), exists: true }
    }
    const info = provider.getUserInfo
      ? await provider.getUserInfo({ adapter: ctx.adapter, provider }, requestOf(ctx))
      : await defaultUserInfo(ctx.adapter, requestOf(ctx))
    return { signedIn: false, user: info ? userFields(info.user) : null, exists: info?.exists === true }
  },

  async admitAddress(context, ctx) {
    const admitted = await admitAddress(ctx, context.verifier!, context.user?.email)
    return isFailure(admitted) ? admitted : { email: admitted.identifier }
  },

  async sendCode(context, ctx) {
    const verifier = context.verifier!
    const sent = await sendSignInMessage(ctx as never, {
      providerId: verifier,
      identifier: String(context.user!.email),
      callbackUrl: ctx.callbackUrl,
      // Always a code, also from a provider that sends links only: it is typed in this browser.
      code: signUpCode(ctx, verifier),
    })
    return isFailure(sent) ? sent : sent.code!
  },

  checkCode(context, ctx, trigger) {
    return checkSignInCode(ctx, {
      ...codeToken(context),
      codeHash: context.codeHash!,
      expires: context.codeExpires,
      attempts: signUpCode(ctx, context.verifier!).attempts,
      typed: (trigger as { code?: unknown }).code,
    })
  },

  voidToken: (context, ctx) => voidCodeToken(ctx as never, codeToken(context)),

  async spendToken(context, ctx) {
    const spent = await spendCodeToken(ctx as never, codeToken(context))
    return isFailure(spent) ? spent : null
  },

  async createAuthenticationOptions(context, ctx) {
    return optionsCreated(await passkeyRequestOptions(ctx, providerOf(ctx, context.providerId), context.user?.id))
  },

  async createRegistrationOptions(context, ctx) {
    const provider = providerOf(ctx, context.providerId)
    const user = context.user as { id?: string; email: string; name?: string }
    const [{ generateRegistrationOptions }, helpers] = await simpleWebAuthn(provider)
    const rp = relyingParty(ctx, provider)
    // The WebAuthn user handle is random (simplewebauthn's default), as in Auth.js: the
    // passkey is tied to its user through the stored authenticator, never through the handle.
    const options = await generateRegistrationOptions({
      ...provider.registrationOptions,
      rpID: rp.id,
      rpName: rp.name,
      userName: user.email,
      ...(user.name ? { userDisplayName: user.name } : {}),
      excludeCredentials: await passkeysOf(ctx, helpers, user.id),
    })
    return optionsCreated(options)
  },

  async spendChallenge(context, ctx) {
    if (context.answered !== context.ceremony) {
      const message = `A WebAuthn ${context.answered} answer for a challenge issued to ${context.ceremony}`
      // Stryker disable next-line StringLiteral: eq#webauthn-refusal-reason
      return refuse(ctx, 'mismatch', message)
    }
    if (!(await spendWebAuthnChallenge(ctx, context.challenge))) {
      return refuse(
        ctx,
        // Stryker disable next-line StringLiteral: eq#webauthn-refusal-reason
        'replayed',
        'The WebAuthn challenge was already used',
      )
    }
    return null
  },

  findAuthenticator: (context, ctx) => findAssertedAuthenticator(ctx, providerOf(ctx, context.providerId), context.response),

  verifyAssertion: (context, ctx) =>
    verifyPasskeyAssertion(
      ctx,
      providerOf(ctx, context.providerId),
      context.response,
      context.challenge,
      context.authenticator as unknown as AdapterAuthenticator,
    ),

  async updateCounter(context, ctx) {
    await updatePasskeyCounter(ctx, context.authenticator as unknown as AdapterAuthenticator, context.newCounter!)
    return null
  },

  async findAccount(context, { adapter }) {
    const stored = context.authenticator as unknown as AdapterAuthenticator
    const account = await adapter.getAccount(stored.providerAccountId, context.providerId)
    const details = { credentialID: stored.credentialID, providerAccountId: stored.providerAccountId }
    if (!account) throw new AuthError(`WebAuthn account not found in database: ${JSON.stringify(details)}`)
    const user = await adapter.getUser(account.userId)
    if (!user) {
      throw new AuthError(`WebAuthn user not found in database: ${JSON.stringify({ ...details, userID: account.userId })}`)
    }
    return { account: account as unknown as Record<string, unknown>, user: user as unknown as Record<string, unknown> }
  },

  async verifyAttestation(context, ctx) {
    const provider = providerOf(ctx, context.providerId)
    const answer = parseAnswer(context.response)
    if (!answer) {
      return refuse(
        ctx,
        // Stryker disable next-line StringLiteral: eq#webauthn-refusal-reason
        'invalid',
        'Invalid WebAuthn Registration response',
      )
    }
    try {
      const [{ verifyRegistrationResponse }, helpers] = await simpleWebAuthn(provider)
      const rp = relyingParty(ctx, provider)
      const { verified, registrationInfo } = await verifyRegistrationResponse({
        ...provider.verifyRegistrationOptions,
        response: answer as never,
        expectedChallenge: context.challenge,
        expectedOrigin: rp.origins,
        expectedRPID: rp.id,
      })
      // Stryker disable next-line LogicalOperator: eq#webauthn-registration-info
      if (!verified || !registrationInfo) throw new Error('WebAuthn registration response could not be verified')
      const { credential, credentialBackedUp, credentialDeviceType } = registrationInfo
      const credentialID = toStoredId(helpers, credential.id)
      // Stryker disable next-line OptionalChaining: eq#webauthn-answer-response
      const transports = answer.response?.transports
      const authenticator = {
        providerAccountId: credentialID,
        credentialID,
        // Stryker disable next-line StringLiteral: eq#webauthn-base64-format
        credentialPublicKey: helpers.isoBase64URL.fromBuffer(credential.publicKey, 'base64'),
        counter: credential.counter,
        credentialBackedUp,
        credentialDeviceType,
        ...(Array.isArray(transports) && transports.length > 0 ? { transports: transports.join(',') } : {}),
      }
      const account = { providerAccountId: credentialID, provider: provider.id, type: 'webauthn' }
      return { account, authenticator }
    } catch (error) {
      // Stryker disable next-line StringLiteral: eq#webauthn-refusal-reason
      return refuse(ctx, 'invalid', error as Error)
    }
  },
})

/** The WebAuthn flow definition. */
export const webauthnSignInFlow = defineCompiledFlow<typeof webauthnSignInMachine, RequestContext>({
  chart: webauthnSigninChart,
  context: WebAuthnSignInContext,
  // The browser has the options; the answer is checked against the challenge alone, so the cookie
  // stays the same size however many passkeys a user has.
  sealed: (context) => ({ ...context, options: null }),
  effects: adapterView(webauthnEffects),
})
