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
import type {
  GenerateAuthenticationOptionsOpts,
  GenerateRegistrationOptionsOpts,
  VerifyAuthenticationResponseOpts,
  VerifyRegistrationResponseOpts,
} from '@simplewebauthn/server'
import {
  WebAuthnSignInContext,
  webauthnSignInMachine,
  type WebAuthnSignInContext as Context,
} from '../../machines/webauthn-signin.machine.js'
import type { SignInCompletionContext } from '../../machines/signin-completion.machine.js'
import type { Adapter, AdapterAccount, AdapterAuthenticator, AdapterUser } from '../adapters.js'
import type { ResolvedConfig } from '../config/resolve-config.js'
import type { CookieOption } from '../cookies.js'
import { DEFAULT_CODE } from '../email/provider.js'
import { ENVELOPE_MAX_AGE } from '../engine/envelope.js'
import { defineFlow } from '../engine/flow.js'
import { AccountNotLinked, AdapterError, AuthError, WebAuthnVerificationError } from '../errors.js'
import type { RequestContext } from '../http/context.js'
import { reportFailure } from '../session/issue.js'
import { signedInAdapterUser } from '../session/current.js'
import type { Account, Awaitable, CommonProviderOptions, CredentialInput } from '../types.js'
import { admitAddress, checkSignInCode, sendSignInMessage, spendCodeToken, voidCodeToken } from './email.js'
import { emitEvent } from './emit.js'
// Asked by every first factor that adopts users by address; kept apart so they need not load this flow.
export { isUnverifiedPasskeyUser } from './passkey-users.js'

// The sign-in page's passkey block (with the browser library, inline) comes with this flow.
export { passkeyForm, passkeyScripts } from '../pages/webauthn.js'
import type { StoredUser } from './signin-completion.js'

/** The relying party of a ceremony (Auth.js's `getRelayingParty` result). */
export interface RelyingParty {
  id: string
  name: string
  origin: string
}

/** What `getUserInfo` answers: the user an options request is about, and whether it is stored. */
export interface WebAuthnUserInfo {
  user: { id?: string; email?: string | null; name?: string | null; [key: string]: unknown }
  exists: boolean
}

/** The request as `getUserInfo` and `getRelayingParty` see it (a subset of Auth.js's). */
export interface WebAuthnRequest {
  url: URL
  method: 'GET' | 'POST'
  headers: Headers
  query: Readonly<Record<string, string>>
  body?: Readonly<Record<string, unknown>>
}

/** A WebAuthn provider (Auth.js's `WebAuthnConfig`). */
export interface WebAuthnConfig extends CommonProviderOptions {
  type: 'webauthn'
  /** Offer passkeys in the autofill of the sign-in page's e-mail field (one provider at most). */
  enableConditionalUI: boolean
  /** The relying party; arrays name several, the first id and name are used, every origin accepted. */
  relayingParty?: { id?: string | string[]; name?: string | string[]; origin?: string | string[] }
  /** Passed to `generateAuthenticationOptions` (the RP id and allowed credentials are ours). */
  authenticationOptions?: Partial<GenerateAuthenticationOptionsOpts>
  /** Passed to `generateRegistrationOptions` (the RP, user and excluded credentials are ours). */
  registrationOptions?: Partial<GenerateRegistrationOptionsOpts>
  /** Passed to `verifyAuthenticationResponse` (e.g. `requireUserVerification`). */
  verifyAuthenticationOptions?: Partial<VerifyAuthenticationResponseOpts>
  /** Passed to `verifyRegistrationResponse` (e.g. `requireUserVerification`). */
  verifyRegistrationOptions?: Partial<VerifyRegistrationResponseOpts>
  /** The inputs of the built-in form; one needs `autocomplete` containing `webauthn` for conditional UI. */
  formFields: Record<string, CredentialInput>
  /** Who an options request is about; by default the stored user of the `email` query (or body) value. */
  getUserInfo?: (
    options: { adapter: Adapter; provider: WebAuthnConfig },
    request: WebAuthnRequest,
  ) => Awaitable<WebAuthnUserInfo | null>
  /** The relying party for a request; by default `relayingParty`, else the request's host and origin. */
  getRelayingParty?: (options: { provider: WebAuthnConfig; url: URL }, request: WebAuthnRequest) => RelyingParty
  /** Accepted for Auth.js configs and ignored: the browser library is served by us, never a CDN. */
  simpleWebAuthnBrowserVersion?: string | false
  /** How `@simplewebauthn/server` is loaded; set by the provider factories. */
  [SIMPLEWEBAUTHN]?: SimpleWebAuthnLoader
}

type SimpleWebAuthn = typeof import('@simplewebauthn/server')
type Helpers = typeof import('@simplewebauthn/server/helpers')

/** `@simplewebauthn/server` and its helpers, as a provider made by `WebAuthn()` or `Passkey()` loads them. */
export type SimpleWebAuthnLoader = () => Promise<[SimpleWebAuthn, Helpers]>

/**
 * The provider factories put their loader of `@simplewebauthn/server` here: an application bundles
 * the library (hundreds of kilobytes with its ASN.1 and X.509 parsers) only by importing a WebAuthn
 * provider, as Auth.js's providers carry their `simpleWebAuthn` functions.
 */
export const SIMPLEWEBAUTHN: unique symbol = Symbol('authchart.simpleWebAuthn')

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

const optionsCreated = <T extends string>(ctx: RequestContext, type: T, options: { challenge: string }) => ({
  type,
  output: { options: { ...options }, challenge: options.challenge },
  at: ctx.at,
})

/** Logs why an answer was refused and returns the refusal for the chart. */
function refuse<T extends string, R extends string>(ctx: RequestContext, type: T, reason: R, cause: string | Error) {
  ctx.logger.error(new WebAuthnVerificationError(cause))
  return { type, reason, error: 'WebAuthnVerificationError' as const, at: ctx.at }
}

const threw = <T extends string>(ctx: RequestContext, type: T, error: unknown) => ({
  type,
  reason: 'threw' as const,
  error: reportFailure(ctx, error),
  at: ctx.at,
})

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

/** The WebAuthn flow definition. */
export const webauthnSignInFlow = defineFlow<typeof webauthnSignInMachine, RequestContext>({
  machine: webauthnSignInMachine,
  context: WebAuthnSignInContext,
  // The browser has the options; the answer is checked against the challenge alone, so the cookie
  // stays the same size however many passkeys a user has.
  sealed: (context) => ({ ...context, options: null }),
  effects: {
    async findUser(context, ctx) {
      const provider = providerOf(ctx, context.providerId)
      const adapter = ctx.config.adapter!
      try {
        const signedIn = await signedInAdapterUser(ctx)
        if (signedIn) {
          return {
            type: 'findUser.done',
            output: { signedIn: true, user: userFields(signedIn as unknown as Record<string, unknown>), exists: true },
            at: ctx.at,
          }
        }
        const info = provider.getUserInfo
          ? await provider.getUserInfo({ adapter, provider }, requestOf(ctx))
          : await defaultUserInfo(adapter, requestOf(ctx))
        return {
          type: 'findUser.done',
          output: { signedIn: false, user: info ? userFields(info.user) : null, exists: info?.exists === true },
          at: ctx.at,
        }
      } catch (error) {
        return threw(ctx, 'findUser.failed', error)
      }
    },

    async admitAddress(context, ctx) {
      const admitted = await admitAddress(ctx, context.verifier!, context.user?.email)
      if (admitted.type === 'admitRequest.failed') {
        return { type: 'admitAddress.failed', reason: admitted.reason, error: admitted.error, at: ctx.at }
      }
      return { type: 'admitAddress.done', output: { email: admitted.output.identifier }, at: ctx.at }
    },

    async sendCode(context, ctx) {
      const verifier = context.verifier!
      const sent = await sendSignInMessage(ctx, {
        providerId: verifier,
        identifier: String(context.user!.email),
        callbackUrl: ctx.callbackUrl,
        // Always a code, also from a provider that sends links only: it is typed in this browser.
        code: signUpCode(ctx, verifier),
      })
      if (sent.type === 'sendVerificationRequest.failed') {
        return { type: 'sendCode.failed', reason: sent.reason, error: sent.error, at: ctx.at }
      }
      return { type: 'sendCode.done', output: sent.output.code!, at: ctx.at }
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

    async voidToken(context, ctx) {
      await voidCodeToken(ctx, codeToken(context))
      return { type: 'voidToken.done', output: null, at: ctx.at }
    },

    async spendToken(context, ctx) {
      const spent = await spendCodeToken(ctx, codeToken(context))
      if (spent.type === 'consumeToken.done') return { type: 'spendToken.done', output: null, at: ctx.at }
      return { type: 'spendToken.failed', reason: spent.reason === 'invalid' ? 'invalid' : 'threw', error: spent.error, at: ctx.at }
    },

    async createAuthenticationOptions(context, ctx) {
      const provider = providerOf(ctx, context.providerId)
      try {
        const [{ generateAuthenticationOptions }, helpers] = await simpleWebAuthn(provider)
        const options = await generateAuthenticationOptions({
          ...provider.authenticationOptions,
          rpID: relyingParty(ctx, provider).id,
          allowCredentials: await passkeysOf(ctx, helpers, context.user?.id),
        })
        return optionsCreated(ctx, 'createAuthenticationOptions.done', options)
      } catch (error) {
        return threw(ctx, 'createAuthenticationOptions.failed', error)
      }
    },

    async createRegistrationOptions(context, ctx) {
      const provider = providerOf(ctx, context.providerId)
      const user = context.user as { id?: string; email: string; name?: string }
      try {
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
        return optionsCreated(ctx, 'createRegistrationOptions.done', options)
      } catch (error) {
        return threw(ctx, 'createRegistrationOptions.failed', error)
      }
    },

    async spendChallenge(context, ctx) {
      if (context.answered !== context.ceremony) {
        const message = `A WebAuthn ${context.answered} answer for a challenge issued to ${context.ceremony}`
        return refuse(ctx, 'spendChallenge.failed', 'mismatch', message)
      }
      let fresh: boolean
      try {
        fresh = await ctx.config.store.claim(`webauthn-challenge:${context.challenge}`, ENVELOPE_MAX_AGE)
      } catch (error) {
        return threw(ctx, 'spendChallenge.failed', error)
      }
      // The envelope opens once per process; the store makes the challenge single-use everywhere.
      if (!fresh) return refuse(ctx, 'spendChallenge.failed', 'replayed', 'The WebAuthn challenge was already used')
      return { type: 'spendChallenge.done', output: null, at: ctx.at }
    },

    async findAuthenticator(context, ctx) {
      const answer = parseAnswer(context.response)
      if (!answer) return refuse(ctx, 'findAuthenticator.failed', 'invalid', 'Invalid WebAuthn Authentication response')
      try {
        const [, helpers] = await simpleWebAuthn(providerOf(ctx, context.providerId))
        const credentialID = toStoredId(helpers, answer.id)
        const authenticator = await ctx.config.adapter!.getAuthenticator!(credentialID)
        if (!authenticator) {
          const message = `WebAuthn authenticator not found in database: ${JSON.stringify({ credentialID })}`
          return refuse(ctx, 'findAuthenticator.failed', 'unknown', message)
        }
        return { type: 'findAuthenticator.done', output: { authenticator: storedAuthenticator(authenticator) }, at: ctx.at }
      } catch (error) {
        return threw(ctx, 'findAuthenticator.failed', error)
      }
    },

    async verifyAssertion(context, ctx) {
      const provider = providerOf(ctx, context.providerId)
      const stored = context.authenticator as unknown as AdapterAuthenticator
      try {
        const [{ verifyAuthenticationResponse }, helpers] = await simpleWebAuthn(provider)
        const rp = relyingParty(ctx, provider)
        const transports = toTransports(stored.transports)
        const { verified, authenticationInfo } = await verifyAuthenticationResponse({
          ...provider.verifyAuthenticationOptions,
          response: parseAnswer(context.response) as never,
          expectedChallenge: context.challenge,
          expectedOrigin: rp.origins,
          expectedRPID: rp.id,
          credential: {
            id: toBrowserId(helpers, stored.credentialID),
            publicKey: helpers.isoBase64URL.toBuffer(stored.credentialPublicKey, 'base64'),
            counter: stored.counter,
            ...(transports ? { transports } : {}),
          },
        })
        if (!verified) throw new Error('WebAuthn authentication response could not be verified')
        return { type: 'verifyAssertion.done', output: { newCounter: authenticationInfo.newCounter }, at: ctx.at }
      } catch (error) {
        return refuse(ctx, 'verifyAssertion.failed', 'invalid', error as Error)
      }
    },

    async updateCounter(context, ctx) {
      const stored = context.authenticator as unknown as AdapterAuthenticator
      try {
        await ctx.config.adapter!.updateAuthenticatorCounter!(stored.credentialID, context.newCounter!)
        return { type: 'updateCounter.done', output: null, at: ctx.at }
      } catch (error) {
        const details = { credentialID: stored.credentialID, oldCounter: stored.counter, newCounter: context.newCounter }
        const message = `Failed to update authenticator counter. This may cause future authentication attempts to fail. ${JSON.stringify(details)}`
        return threw(ctx, 'updateCounter.failed', new AdapterError(message, error as Error))
      }
    },

    async findAccount(context, ctx) {
      const adapter = ctx.config.adapter!
      const stored = context.authenticator as unknown as AdapterAuthenticator
      try {
        const account = await adapter.getAccount!(stored.providerAccountId, context.providerId)
        const details = { credentialID: stored.credentialID, providerAccountId: stored.providerAccountId }
        if (!account) throw new AuthError(`WebAuthn account not found in database: ${JSON.stringify(details)}`)
        const user = await adapter.getUser!(account.userId)
        if (!user) {
          throw new AuthError(`WebAuthn user not found in database: ${JSON.stringify({ ...details, userID: account.userId })}`)
        }
        return {
          type: 'findAccount.done',
          output: {
            account: account as unknown as Record<string, unknown>,
            user: user as unknown as Record<string, unknown>,
          },
          at: ctx.at,
        }
      } catch (error) {
        return threw(ctx, 'findAccount.failed', error)
      }
    },

    async verifyAttestation(context, ctx) {
      const provider = providerOf(ctx, context.providerId)
      const answer = parseAnswer(context.response)
      if (!answer) return refuse(ctx, 'verifyAttestation.failed', 'invalid', 'Invalid WebAuthn Registration response')
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
        if (!verified || !registrationInfo) throw new Error('WebAuthn registration response could not be verified')
        const { credential, credentialBackedUp, credentialDeviceType } = registrationInfo
        const credentialID = toStoredId(helpers, credential.id)
        const transports = answer.response?.transports
        const authenticator = {
          providerAccountId: credentialID,
          credentialID,
          credentialPublicKey: helpers.isoBase64URL.fromBuffer(credential.publicKey, 'base64'),
          counter: credential.counter,
          credentialBackedUp,
          credentialDeviceType,
          ...(Array.isArray(transports) && transports.length > 0 ? { transports: transports.join(',') } : {}),
        }
        const account = { providerAccountId: credentialID, provider: provider.id, type: 'webauthn' }
        return { type: 'verifyAttestation.done', output: { account, authenticator }, at: ctx.at }
      } catch (error) {
        return refuse(ctx, 'verifyAttestation.failed', 'invalid', error as Error)
      }
    },
  },
})
