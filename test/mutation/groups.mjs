// The mutation groups of `npm run mutate` (stryker.config.mjs): each mutates a few security-critical
// modules and runs only the test files that guard them. A module is a whole file, or the parts of
// it named by declaration: `file#name` (one function, constant, guard or action), `file#first..last`
// (from the first named declaration to the end of the last). Names, not line numbers, so that a
// group keeps mutating the same code when the lines around it move: line ranges drifted twice onto
// unrelated code, and the group's score then measured that code.
import { readFileSync } from 'node:fs'
import ts from 'typescript'

/** Mutated modules (whole files, or `file#name` / `file#first..last` declarations) and the tests that guard them. */
export const groups = {
  csrf: {
    mutate: ['core/http/csrf.ts', 'core/crypto.ts#timingSafeEqual'],
    tests: ['test/core/csrf.test.ts', 'test/mutation/csrf.test.ts'],
  },
  envelope: {
    mutate: ['core/engine/envelope.ts', 'core/fast/jwe-gcm.ts'],
    tests: ['test/core/envelope.test.ts', 'test/core/resume.test.ts', 'test/core/fast/jwe-gcm.test.ts', 'test/mutation/envelope.test.ts', 'test/mutation/webcrypto.test.ts'],
  },
  jwt: {
    mutate: ['core/jwt.ts', 'core/fast/jwe-cbc.ts'],
    tests: ['test/core/jwt.test.ts', 'test/core/fast/jwe-cbc.test.ts', 'test/mutation/jwt.test.ts', 'test/mutation/webcrypto.test.ts'],
  },
  cookies: {
    mutate: ['core/cookies.ts'],
    tests: ['test/core/session.test.ts', 'test/core/signout.test.ts', 'test/mutation/cookies.test.ts', 'test/mutation/session.test.ts'],
  },
  redirect: {
    mutate: ['core/http/dispatch.ts#isValidCallbackUrl', 'core/http/dispatch.ts#resolveCallbackUrl', 'core/flows/callbacks.ts#defaultRedirect', 'core/config/origins.ts'],
    // Every request resolves its callback URL: each of these tests covers every mutant of dispatch.ts,
    // so the group keeps to the files about redirects (hardening.test.ts repeats them at a cost).
    tests: ['test/core/routing.test.ts', 'test/security/redirect-proxy-origins.test.ts', 'test/mutation/redirect.test.ts'],
  },
  oauth: {
    // The checks: protected parameters, callback URL and redirect proxy, state/PKCE/nonce, the code
    // exchange and ID token signature, the key-set refetch. Not the profile mapping around them.
    mutate: [
      'core/flows/oauth/flow.ts#PROXY_STATE_SALT..validatedCallback',
      'core/flows/oauth/flow.ts#createAuthorizationRequest..exchangeCode',
      'core/oauth/exchange.ts#verifyIdToken..exchangeAuthorizationCode',
      'core/oauth/server.ts#LOOPBACK..isLoopback',
      'core/oauth/server.ts#refetchJwksOnce..verifyIdTokenSignature',
      'core/oauth/proxy-state.ts',
    ],
    // Against the in-process stand-in provider only (its answers changed one at a time, its key set
    // rotated, a DPoP proof and a proxied callback seen): the suites against the real OpenID Provider
    // (test/oauth/, test/security/redirect-proxy-takeover.test.ts, jwks-rotation.test.ts) started it
    // again for every mutant, and the run took 27 minutes.
    // The proxied state against @auth/core's own code (in-process, no provider).
    tests: ['test/mutation/oauth.test.ts', 'test/mutation/oauth-standin.test.ts', 'test/surfaces/redirect-proxy-authjs.test.ts'],
  },
  // The ID token signature's fast path, split from the oauth group: its module constants (the
  // algorithm table, the runtime's crypto) are static mutants, each of which reruns the whole test
  // list; here that list is its unit tests, milliseconds each, instead of every OAuth sign-in.
  'id-token': {
    mutate: ['core/fast/id-token-signature.ts'],
    tests: ['test/core/fast/id-token-signature.test.ts', 'test/mutation/webcrypto.test.ts'],
  },
  // Account linking after an OAuth sign-in: which user an account may be linked to (never a
  // passkey sign-up whose address nobody verified).
  linking: {
    mutate: [
      'core/flows/oauth/flow.ts#storeOAuthUser',
      'core/session/current.ts#signedInAdapterUser',
      'core/flows/passkey-users.ts#isUnverifiedPasskeyUser',
    ],
    tests: [
      'test/oauth/linking.test.ts',
      'test/machines/signin-completion.model.test.ts',
      'test/mutation/linking.test.ts',
      'test/webauthn/linking-decision.test.ts',
      'test/webauthn/pre-account-takeover.test.ts',
      'test/core/authority.test.ts',
    ],
  },
  session: {
    // Expiry: when a session is over, extended or re-issued, and the expiry each one carries,
    // idle (maxAge) and absolute (absoluteMaxAge, the sign-in time a session keeps).
    mutate: [
      'machines/session.logic.ts#isSessionOver',
      'machines/session.logic.ts#isSessionExpired..isExtensionDue',
      'machines/session.logic.ts#isReissueDue',
      'machines/session.logic.ts#scheduleReissue..rememberExtension',
      'core/session/current.ts',
      'core/session/cache.ts',
      'core/session/lifecycle.ts#finite..endedInStore',
      'core/session/lifecycle.ts#toSeconds..renewedExpiry',
      'core/session/issue.ts#withSignInTime..createSessionRow',
      'core/flows/session/flow.ts#jwtCallbackDone..needsSignInTime',
      'core/flows/session/flow.ts#getSessionAndUser..extendSession',
    ],
    tests: [
      'test/core/session.test.ts',
      'test/core/database-session.test.ts',
      'test/machines/session.model.test.ts',
      'test/mutation/session.test.ts',
      'test/core/authority.test.ts',
      'test/core/session-cache.test.ts',
      // The cached copy refused after a re-authentication (one Redis server per file, started once).
      'test/surfaces/session-cache-proof.test.ts',
    ],
  },
  // Sessions, second factors, stores, the HTTP gate
  // A user's sessions: the list and each revoke form, whose rows they may touch, and sign-out
  // everywhere (the not-before times it writes). Its tests run on the memory adapter and store: the
  // same routes on PGlite and PostgreSQL (test/ownership/) would rerun a server for every mutant.
  sessions: {
    mutate: ['core/session/manage.ts', 'core/session/id.ts', 'core/session/lifecycle.ts#endJwtSessionsOf..endJwtSessionsOfProviderSession'],
    tests: ['test/mutation/sessions.test.ts'],
  },
  // Organisations: roles as data, can(), and the active organisation (the signed cookie bound to its
  // user, the membership re-read on every session read and permission check, the switch route);
  // the membership chart's checks and writes (the active organisation acted in, permission and rank,
  // the target of that organisation, the state a change starts from), its refusals, the server
  // functions, and the memory adapter's compare-and-set (the last owner under races).
  // Memory adapter only: the PostgreSQL contract (test/organizations/adapters.test.ts) would start
  // PGlite again for every mutant.
  organizations: {
    mutate: [
      'core/organizations/roles.ts',
      'core/organizations/access.ts',
      'core/organizations/active.ts',
      'core/organizations/manage.ts',
      'core/organizations/members.ts',
      'core/organizations/types.ts#takesAnOwnerAway',
      'core/organizations.ts#changeOrganization..listMembers',
      'machines/organization-membership.logic.ts#REFUSAL_STATUS..assignments',
      'adapters/memory-organizations.ts#changeMembership..deleteOrganization',
    ],
    tests: [
      'test/organizations/roles.test.ts',
      'test/organizations/can.test.ts',
      'test/organizations/active-organization.test.ts',
      'test/organizations/manage.test.ts',
      'test/organizations/members.test.ts',
      'test/organizations/members-edges.test.ts',
      'test/organizations/membership-model.test.ts',
      'test/organizations/membership-change.test.ts',
      'test/organizations/fail-closed.test.ts',
      'test/mutation/organizations.test.ts',
    ],
  },
  // Organisation invitations (issue 45 item 2): who may invite and to which role, the limits per
  // organisation and inviter, the link token, the proven invitee, once, expiry, revocation, and
  // the membership made active only after the one-time settlement.
  'organization-invitations': {
    mutate: ['core/organizations/invitations.ts', 'machines/organization-invitation.logic.ts#REFUSAL_STATUS..assignments'],
    tests: [
      'test/organizations/invitations.test.ts',
      'test/organizations/invitations.module.test.ts',
      'test/organizations/invitation-model.test.ts',
      // The e-mail provider's sender when the organisations have none of their own.
      'test/organizations/invitation-email.test.ts',
      // The checks behind the one-time settlement, each page refusal's error, the token's derivation.
      'test/mutation/organization-invitations.test.ts',
    ],
  },
  // API keys: the key format, its keyed hash and the constant-time check, the verification (revoked,
  // expired, scopes, organisation, rotation overlap, the last-use claim), ownership of each change
  // (personal keys, and organisation keys by role), and the routes of {basePath}/api-keys (CSRF,
  // step-up, another user's key by id, outages) and their audit events by prefix only (issue 46
  // item 1). Memory adapter only: the PostgreSQL tests (test/api-keys/postgres.test.ts) would start
  // PGlite again for every mutant.
  'api-keys': {
    mutate: [
      'core/api-keys/secret.ts',
      'core/api-keys/verify.ts',
      'core/api-keys/manage.ts',
      // The membership and scope checks of an organisation's keys (shared with service accounts).
      'core/organizations/membership.ts',
      'core/api-keys/routes.ts',
      'adapters/memory-api-keys.ts',
    ],
    tests: [
      'test/api-keys/secret.test.ts',
      'test/api-keys/verify.test.ts',
      'test/api-keys/manage.test.ts',
      'test/api-keys/routes.test.ts',
      'test/api-keys/audit.test.ts',
      'test/api-keys/lifecycle.model.test.ts',
      // Each bound of the input, the key format and the overlap at its edge; the memory adapter's copies.
      'test/mutation/api-keys.test.ts',
    ],
  },
  // Service accounts: the token endpoint (the client credentials grant, client authentication by
  // secret or private_key_jwt, single-use assertions, the per-client limit), the signing keys and
  // their rotation, verifyServiceToken (alg pinned, our kids only, iss/aud/exp/typ, revocation) and
  // ownership of each change (issue 46 item 2). Memory adapter only, as for API keys.
  'service-accounts': {
    mutate: [
      'core/service-accounts/keys.ts',
      'core/service-accounts/token.ts',
      'core/oauth/form.ts',
      'core/service-accounts/verify.ts',
      'core/service-accounts/manage.ts',
      'adapters/memory-service-accounts.ts',
    ],
    tests: ['test/service-accounts/attacks.test.ts', 'test/mutation/service-accounts.test.ts'],
  },
  // The device authorization grant (RFC 8628, issue 46 item 3): the codes (random, readable, keyed
  // hashes), the chart's effects over the shared store (single-use redemption, slow_down, the
  // settlement, the per-user and per-address user-code limits), the device's endpoints (the grant
  // type dispatch shared with service accounts, fail closed), the approval page and deviceSession.
  'device-authorization': {
    mutate: [
      'core/device-authorization.ts#deviceAuthorization',
      'core/device-authorization/codes.ts',
      'core/device-authorization/flow.ts',
      'core/device-authorization/endpoints.ts',
      'core/device-authorization/page.ts',
      'core/device-authorization/session.ts',
      'machines/device-authorization.logic.ts#oauthError..assignments',
    ],
    tests: [
      'test/device-authorization/attacks.test.ts',
      'test/device-authorization/model.test.ts',
      'test/device-authorization/codes.test.ts',
      'test/device-authorization/flow.test.ts',
      // Each check at its edge: the form's bounds, what the store's expiry alone would hide, each end's outcome, the jwt callback.
      'test/mutation/device-authorization.test.ts',
      // The approval page's markup: its forms, what it shows, its refusals' words.
      'test/mutation/device-page.test.ts',
    ],
  },
  // The built-in second factor: code checks and their limits (per challenge, per user, per client,
  // per known device, the late check), the known-device mark, single use of TOTP steps and backup
  // codes, the sealed secret, and the enrolment.
  'second-factor': {
    mutate: [
      'core/second-factor/index.ts',
      'core/second-factor/device.ts',
      'core/second-factor/alert.ts',
      'core/second-factor/stored.ts',
      'core/second-factor/totp.ts',
      'core/flows/totp-enrolment/flow.ts',
      'core/flows/totp-enrolment/settings.ts',
      'machines/totp-enrolment.logic.ts#toStepPage..toDenial',
      'machines/totp-enrolment.logic.ts#guards',
    ],
    tests: [
      // Not backup-codes.test.ts nor second-factor.test.ts: their PostgreSQL, Redis and OpenID
      // provider servers would start again for every mutant of the code check;
      // test/mutation/second-factor.test.ts checks the same limits and races in memory.
      'test/second-factor/lockout.test.ts',
      // Not shared-stores.test.ts (PostgreSQL and Redis servers): trickle.test.ts checks the same
      // limits under concurrency in memory.
      'test/second-factor-lockout/trickle.test.ts',
      'test/second-factor-lockout/through-auth.test.ts',
      'test/second-factor-lockout/device.test.ts',
      'test/second-factor-lockout/notice.test.ts',
      'test/second-factor-lockout/passkey.test.ts',
      'test/second-factor-lockout/messages.test.ts',
      'test/second-factor/enrolment-attacks.test.ts',
      'test/second-factor/removal.test.ts',
      'test/second-factor/regenerate.test.ts',
      'test/machines/totp-enrolment.test.ts',
      'test/machines/totp-enrolment.model.test.ts',
      'test/mutation/second-factor.test.ts',
      'test/mutation/totp-enrolment.test.ts',
      'test/mutation/flow-modules.test.ts',
    ],
  },
  // The sign-in completion every first factor hands over to: its guards and actions (the gate to
  // the second factor) and its effects. Split from the extensions wired into it and from the graph
  // check (their own groups below): the three together were 700 mutants, each rerunning the model
  // test and its OpenID provider, more than a run can afford. Its static mutants (the chart, guard,
  // action and effect tables built when the modules load) are left out: each would rerun every
  // test below, a minute apiece; every model test walks the chart they build, and
  // test/mutation/flow-modules.test.ts checks that a flow loads with every effect.
  completion: {
    ignoreStatic: true,
    mutate: ['machines/signin-completion.logic.ts#sessionChange..ExtensionError', 'core/flows/signin-completion/flow.ts'],
    tests: [
      'test/machines/signin-completion.model.test.ts',
      'test/extensions/after-first-sign-in.test.ts',
      // Not test/second-factor/second-factor.test.ts: its OpenID provider would start again for
      // every mutant; test/mutation/completion.test.ts runs its credentials cases in memory.
      'test/mutation/completion.test.ts',
      // The effects: what the signIn event and jwt callback are told, provider sessions, the steps
      // after the first sign-in; OAuth through the in-process stand-in provider.
      'test/mutation/completion-flow.test.ts',
    ],
  },
  // The extensions of the sign-in completion: what an application's extension may not do (checked
  // when the config loads) and how it is wired into the chart. Static mutants left out as above.
  // Credentials and e-mail sign-ins on the memory adapter only: every test that loads a config
  // covers every check of the extensions, so a test with an OpenID provider (the terms step through
  // OIDC, test/extensions/insertion-points.test.ts) would start it again for every mutant.
  extensions: {
    ignoreStatic: true,
    mutate: ['core/extensions.ts', 'core/flows/signin-completion/extended.ts'],
    tests: [
      'test/extensions/extensions.test.ts',
      'test/extensions/define-extension.test.ts',
      'test/extensions/compose.test.ts',
      'test/extensions/after-first-sign-in.test.ts',
      // Denial codes, runs and waitsFor, each shape of an effect's answer.
      'test/mutation/extensions.test.ts',
    ],
  },
  // The checks on the charts' graphs: no session around the second-factor gate, no sensitive
  // action around the freshness gate. Pure functions of a chart: no server, no request.
  'chart-checks': {
    ignoreStatic: true,
    mutate: ['machines/checks.ts'],
    tests: ['test/machines/gate.test.ts', 'test/machines/freshness-gate.test.ts', 'test/mutation/chart-checks.test.ts'],
  },
  // The step routes (a flow waiting for the user: its page, its answer) and the two-step settings
  // (turning the second factor off): apart from the completion, whose test list is slow to rerun.
  steps: {
    mutate: ['core/http/steps.ts', 'core/flows/totp-enrolment/settings.ts', 'core/flows/reauthenticate/resume.ts'],
    tests: [
      'test/mutation/completion.test.ts',
      'test/mutation/totp-enrolment.test.ts',
      // The page that resumes an action after re-authentication; turning the factor off, audited.
      'test/reauthenticate/password.test.ts',
      'test/second-factor/removal.test.ts',
      // What a step takes and shows: named events, coerced and masked fields, extension pages.
      'test/mutation/steps.test.ts',
    ],
  },
  // The store: claim (single use), increment (counts), values with a lifetime (not-before times),
  // sets, and the deadline guard; on memory, PGlite and Redis. Not test/store/contract.test.ts: its
  // PostgreSQL server would start again for every mutant (PGlite runs the same SQL), nor
  // rate-limit.test.ts (the limits through Auth and Fastify; test/mutation/stores.test.ts counts
  // them in the store directly).
  stores: {
    mutate: ['core/store/index.ts', 'core/store/limits.ts#admitAttempt..countAttempt', 'stores/postgres.ts', 'stores/redis.ts'],
    tests: ['test/store/memory.test.ts', 'test/mutation/stores.test.ts'],
  },
  // The HTTP gate: the CSRF check and where it applies, and the refusal of a session cookie from
  // a flow that may not issue one.
  gate: {
    mutate: ['core/http/dispatch.ts#SESSION_ISSUERS..assertSessionIssued', 'core/http/dispatch.ts#dispatch'],
    // The re-authentication re-issues the session from its marking state, behind the step-up gate.
    tests: ['test/mutation/gate.test.ts', 'test/machines/gate.test.ts', 'test/core/csrf.test.ts', 'test/reauthenticate/password.test.ts'],
  },
  // The flags of the routing table: which routes check the CSRF token, hand one out, end the
  // session or act for the signed-in user. Only the flags (boolean literals): the table's strings,
  // objects and functions are what every routing test reaches, and each of its mutants reruns the
  // whole test list (the table is built when the modules load). The table is the core routes and
  // each flow module's own `routes` (`routes` itself only joins them, and has no flag).
  'route-flags': {
    mutate: [
      'core/http/routes.ts#coreRoutes',
      'core/flows/credentials/index.ts#routes',
      'core/flows/email/index.ts#routes',
      'core/flows/logout/index.ts#routes',
      'core/flows/oauth/index.ts#routes',
      'core/flows/reauthenticate/index.ts#routes',
      'core/flows/session/index.ts#routes',
      'core/flows/totp-enrolment/index.ts#routes',
      'core/flows/webauthn/index.ts#routes',
    ],
    excludedMutations: [
      'ArithmeticOperator', 'ArrayDeclaration', 'ArrowFunction', 'AssignmentOperator', 'BlockStatement', 'ConditionalExpression',
      'EqualityOperator', 'LogicalOperator', 'MethodExpression', 'ObjectLiteral', 'OptionalChaining', 'Regex', 'StringLiteral',
      'UnaryOperator', 'UpdateOperator',
    ],
    tests: ['test/mutation/gate.test.ts', 'test/core/authority-routes.test.ts', 'test/mutation/route-flags.test.ts'],
  },
  // E-mail, passkeys, credentials limits, refresh, adapters
  // E-mail sign-in: the token's identifier check and single use, the scanner-safe confirmation,
  // the code bound to its token and its attempt limit, the send throttle per mailbox.
  email: {
    mutate: [
      'core/flows/email/flow.ts#sendKey..codeAttemptsKey',
      'core/flows/email/flow.ts#storeEmailUser..confirmLinkPage',
      'core/flows/email/flow.ts#checkSignInCode..voidCodeToken',
      'core/flows/email/flow.ts#consumeToken',
      'core/email/secrets.ts#hashToken..tokenHashCandidates',
      'core/email/secrets.ts#canonicalCode..hashCode',
      'core/email/normalize.ts#defaultNormalizer..isDeliverableAddress',
    ],
    tests: [
      'test/email/attacks.test.ts',
      'test/email/code.test.ts',
      // Not test/email/identifier.test.ts: its PGlite costs seconds per mutant; its attack through an
      // adapter that ignores the address (where only the engine refuses) is in test/mutation/email.test.ts.
      'test/email/signin.test.ts',
      'test/email/units.test.ts',
      'test/machines/email-signin.model.test.ts',
      'test/mutation/email.test.ts',
      // The user an address adopts, the links that still sign in, the normaliser's refusals.
      'test/mutation/email-flow.test.ts',
    ],
  },
  // One limit per recipient for every e-mail we send (issue 48, item 5): the count per inbox, the
  // refusal past it, the provider's limit or the default, failing closed on a store outage.
  'send-limit': {
    mutate: ['core/email/send-limit.ts'],
    tests: ['test/reauth-hardening/send-limit.module.test.ts', 'test/reauth-hardening/send-limit.test.ts'],
  },
  // Re-authentication's proofs against the stored user and its way back (issue 48, items 1 and 2;
  // issue 43, item 7): the address a code goes to, who has a password, the action named, the resume
  // target, and the guard that keeps every Location on the site.
  'reauth-provenance': {
    mutate: [
      'core/flows/reauthenticate/chart.ts#storedAddressOf',
      'core/flows/reauthenticate/chart.ts#hasPassword',
      'core/flows/reauthenticate/chart.ts#isSignedInUser',
      'core/flows/reauthenticate/gate.ts#resumeTarget',
      'core/flows/reauthenticate/policy.ts#actionLabelOf',
      'core/http/dispatch.ts#isSchemeRelative',
      'core/http/dispatch.ts#encodeLocation',
    ],
    tests: [
      'test/reauth-hardening/stored-address.test.ts',
      'test/reauth-hardening/factor-provenance.test.ts',
      'test/reauth-hardening/page-factors.module.test.ts',
      'test/reauth-hardening/page-factors.test.ts',
      'test/reauth-hardening/resume-redirect.test.ts',
      'test/reauth-hardening/location-guard.test.ts',
      'test/mutation/reauth-provenance.test.ts',
    ],
  },
  // Re-authentication's freshness (issue 49 item 1): which factors a policy accepts, how recently,
  // the per-factor verification times a token or a row carries (and a legacy one without them),
  // the core's fresh-sign-in rule without the step-up module, and the callback it waits for.
  reauth: {
    mutate: ['core/flows/reauthenticate/flow.ts', 'core/session/freshness.ts', 'core/session/verification.ts'],
    tests: [
      'test/core/factor-times.test.ts',
      'test/core/recent-auth.test.ts',
      'test/core/time-claims.test.ts',
      'test/reauthenticate/password.test.ts',
      'test/mutation/reauth.test.ts',
    ],
  },
  // Passkeys, the ceremonies: the challenge claim, the RP id and origin at registration and
  // sign-in, the counter, the credential's account and user.
  webauthn: {
    mutate: [
      'core/flows/webauthn/flow.ts#relyingParty',
      'core/flows/webauthn/flow.ts#passkeyRequestOptions..updatePasskeyCounter',
      'core/flows/webauthn/flow.ts#spendChallenge..verifyAttestation',
      'core/flows/webauthn/types.ts',
    ],
    tests: [
      'test/webauthn/attacks.test.ts',
      'test/reauthenticate/passkey.test.ts',
      'test/webauthn/registration-rp.test.ts',
      'test/webauthn/webauthn.test.ts',
      'test/machines/webauthn-signin.model.test.ts',
      'test/security/layers.test.ts',
      'test/mutation/webauthn.test.ts',
    ],
  },
  // Passkeys, the users: which user a passkey signs in or is added to (the signed-in user, found by
  // the one authority), a sign-up's new user, and the unverified passkey sign-up no address adopts.
  passkeys: {
    mutate: ['core/flows/webauthn/flow.ts#storeWebAuthnUser', 'core/flows/webauthn/flow.ts#findUser', 'core/flows/passkey-users.ts'],
    tests: [
      'test/webauthn/linking-decision.test.ts',
      'test/webauthn/pre-account-takeover.test.ts',
      'test/webauthn/verification.test.ts',
      'test/webauthn/webauthn.test.ts',
      'test/mutation/webauthn.test.ts',
      'test/mutation/passkeys.test.ts',
    ],
  },
  // Credentials: the attempt limits (per identifier whatever the body's shape, per client) and the
  // bodies that never reach authorize.
  credentials: {
    mutate: ['core/flows/credentials/flow.ts#spelledAs..malformedCredential', 'core/flows/credentials/flow.ts#admitAttempt..authorize'],
    tests: [
      'test/core/credentials.test.ts',
      'test/store/rate-limit.test.ts',
      'test/machines/credentials-signin.model.test.ts',
      'test/mutation/credentials.test.ts',
    ],
  },
  // Refresh-token rotation: one grant per refresh token (single flight in the process and through
  // the store), the result kept sealed for the requests still carrying the spent token.
  refresh: {
    mutate: ['core/oauth/refresh.ts'],
    // The token endpoint played in-process: the suites against the real OpenID Provider
    // (test/oauth/refresh.test.ts, test/store/refresh-shared.test.ts) cost seconds per mutant.
    tests: ['test/mutation/refresh.test.ts'],
  },
  // Password hashes: the digest comparison, the PHC and imported formats' parsing and limits,
  // needsRehash, and the migration hook's one legacy check per user.
  'password-hashing': {
    mutate: [
      'core/password/encoding.ts',
      'core/password/phc.ts',
      'core/password/hashing.ts',
      'core/password/migrate.ts',
      'core/password/formats/argon2.ts',
      'core/password/formats/scrypt.ts',
      'core/password/formats/bcrypt.ts',
      'core/password/formats/firebase-scrypt.ts',
      'core/password/formats/pbkdf2.ts',
      'core/password/formats/better-auth-scrypt.ts',
      'core/password/formats/index.ts',
    ],
    // Not test/password/hashing.test.ts: its checks at the default costs (argon2 at 64 MiB, scrypt at
    // 128 MiB, seconds each) ran again for nearly every mutant; the same rules at small costs are in
    // test/mutation/password-hashing.test.ts.
    tests: ['test/password/formats.test.ts', 'test/mutation/password-hashing.test.ts'],
  },
  // The password policy: length bounds, the breached-password range check failing closed.
  'password-policy': {
    mutate: ['core/password/policy.ts'],
    tests: ['test/password/policy.test.ts'],
  },
  // The password flows: the dummy verification for an unknown address, the pending password of an
  // unproven address, the single-use purpose-bound tokens, every session ended by a reset, and the
  // one answer for known and unknown addresses.
  'password-flows': {
    mutate: [
      'core/flows/password/signin.ts#verifyUserPassword',
      'core/flows/password/signin.ts#passwordSignInEffects',
      'core/flows/password/signup.ts#passwordSignUpEffects',
      'core/flows/password/reset.ts#endEverySession..passwordResetEffects',
      'core/flows/password/tokens.ts',
      'core/flows/password/pending.ts',
      'machines/password-signin.logic.ts#guards..assignments',
      'machines/password-signup.logic.ts#guards..assignments',
      'machines/password-reset.logic.ts#guards..assignments',
    ],
    tests: [
      'test/password-flow/signin.test.ts',
      'test/password-flow/signup.test.ts',
      'test/password-flow/reset.test.ts',
      'test/password-flow/graph.test.ts',
      'test/password-flow/signin-model.test.ts',
      'test/password-flow/signup-model.test.ts',
      'test/password-flow/reset-model.test.ts',
      'test/mutation/password-flows.test.ts',
    ],
  },
  // The adapter methods the security depends on: sessions (listSessions per user, deleteSession,
  // getSessionAndUser), verification tokens (single use, for their identifier), authenticators.
  adapters: {
    mutate: [
      'adapters/memory.ts#getSessionAndUser',
      'adapters/memory.ts#listSessions',
      'adapters/memory.ts#deleteSession',
      'adapters/memory.ts#useVerificationToken',
      'adapters/memory.ts#getAuthenticator..updateAuthenticatorCounter',
      'adapters/postgres.ts#getSessionAndUser',
      'adapters/postgres.ts#listSessions..useVerificationToken',
      'adapters/postgres.ts#getAuthenticator..updateAuthenticatorCounter',
      'adapters/memory.ts#passwordMethods',
    ],
    // Not test/adapters/pglite.test.ts: a PGlite started again for every mutant cost most of the
    // run; test/mutation/adapters.test.ts runs the same contract on the run's PostgreSQL server.
    tests: ['test/adapters/memory.test.ts', 'test/mutation/adapters.test.ts', 'test/password-flow/adapter-memory.test.ts'],
  },
  // Back-channel and front-channel logout by the provider (issue 49 item 1): the Logout Token's
  // header, signature and claims (iss, aud as a string or an array, iat, exp, jti, events, sid or
  // sub), its single use, and which of our sessions a provider session reaches. The page's headers
  // are the page-policy group's. Against the in-process stand-in provider only.
  'logout-token': {
    mutate: ['core/oauth/logout-token.ts', 'core/flows/logout/flow.ts#INDEX_SALT..logoutFlow'],
    tests: ['test/mutation/logout-token.test.ts'],
  },
  // DPoP (the sealed key pair, the one nonce retry) and pushed authorization requests (the browser
  // sent with client_id and request_uri only), against the in-process stand-in provider.
  'dpop-par': {
    mutate: ['core/oauth/dpop.ts', 'core/oauth/par.ts'],
    tests: ['test/oauth/dpop-key.test.ts', 'test/mutation/dpop-par.test.ts'],
  },
  // Outages: which failures are one (each code, state and driver message), the deadline each call
  // gets, and the 503 that names its cause; a bug misread as an outage would hide behind a 503.
  outage: {
    mutate: ['core/outage.ts'],
    tests: ['test/core/outage.test.ts', 'test/mutation/outage.test.ts'],
  },
  // The recent-authentication guards of Next.js (server components, route handlers) and Hono: the
  // policy each route or action gives kept, a return path of this site only; and the server
  // actions' origin check, against the site's origin and never the request's own.
  guards: {
    mutate: [
      'integrations/next/recent-auth.ts#isSitePath..initRequireRecentAuth',
      'integrations/next/actions.ts#context',
      'integrations/hono/index.ts#requireRecentAuth',
    ],
    tests: ['test/integrations/next.test.ts', 'test/integrations/hono.test.ts', 'test/mutation/guards.test.ts'],
  },
  // The audit trail: what each event says (user, factors, outcome, the client's address hashed),
  // the sinks never waited for past the timeout, and the webhook's signature and retries (the
  // in-process queue; the store-backed one needs the store servers).
  audit: {
    mutate: ['core/audit/record.ts', 'core/audit/webhook.ts#signWebhook..webhookFailure', 'core/audit/webhook.ts#kinds..inMemory', 'core/audit/webhook-queue.ts'],
    tests: ['test/audit/events.test.ts', 'test/audit/privacy.test.ts', 'test/audit/webhook.test.ts', 'test/mutation/audit.test.ts'],
  },
  // Telemetry as an observer: the options checked, the API loaded once (again after a failed load),
  // and the span fed from the record the audit keeps, with no client address in it.
  telemetry: {
    mutate: ['core/telemetry/observer.ts'],
    // Not test/telemetry/otel.test.ts: it starts the OpenID Provider for its OIDC sign-in, again for
    // every mutant; the sign-in's span is asserted here in process.
    tests: ['test/telemetry/privacy.test.ts', 'test/mutation/telemetry.test.ts'],
  },
  // The built-in pages' policy: no framing, no script but ours by hash (and the hash itself), the
  // front-channel page framed by its providers only.
  'page-policy': {
    mutate: [
      'core/pages/policy.ts',
      'core/http/answer.ts#guardPage',
      'core/flows/logout/flow.ts#frontChannelHeaders..respondFrontChannelPage',
    ],
    tests: ['test/surfaces/page-framing.test.ts', 'test/mutation/page-policy.test.ts'],
  },
}

/** Lines of every declaration called `name` in `source`: functions, variables, properties, methods. */
function declarationsNamed(source, name) {
  const found = []
  const visit = (node) => {
    const named =
      ts.isFunctionDeclaration(node) ||
      ts.isVariableDeclaration(node) ||
      ts.isPropertyAssignment(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isClassDeclaration(node)
    if (named && node.name && ts.isIdentifier(node.name) && node.name.text === name) {
      // A variable's lines are its whole statement (`export const x = …`), not only its name.
      const whole = ts.isVariableDeclaration(node) ? node.parent.parent : node
      const line = (pos) => source.getLineAndCharacterOfPosition(pos).line + 1
      found.push({ from: line(whole.getStart(source)), to: line(whole.getEnd()) })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** The one declaration called `name` in `file`; a missing or ambiguous name is an error, never a guess. */
function declarationLines(file, source, name) {
  const found = declarationsNamed(source, name)
  if (found.length !== 1) {
    throw new Error(`mutation group: ${file} has ${found.length} declarations named "${name}" (expected exactly one)`)
  }
  return found[0]
}

/**
 * The Stryker `mutate` patterns of one entry: a whole file as it is, `file#name` and
 * `file#first..last` as the `file:from-to` line range those declarations span today.
 */
export function toStrykerPattern(entry, root = process.cwd()) {
  const hash = entry.indexOf('#')
  if (hash === -1) return entry
  const file = entry.slice(0, hash)
  const [first, last = first] = entry.slice(hash + 1).split('..')
  const text = readFileSync(new URL(file, `file://${root}/`), 'utf8')
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const from = declarationLines(file, source, first).from
  const to = declarationLines(file, source, last).to
  if (to < from) throw new Error(`mutation group: in ${file}, "${last}" comes before "${first}"`)
  return `${file}:${from}-${to}`
}
