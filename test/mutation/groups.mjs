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
      'core/fast/id-token-signature.ts',
    ],
    tests: [
      'test/oauth/oidc-signin.test.ts',
      'test/oauth/attacks.test.ts',
      'test/oauth/redirect-proxy.test.ts',
      'test/security/redirect-proxy-takeover.test.ts',
      'test/security/jwks-rotation.test.ts',
      'test/mutation/oauth.test.ts',
      'test/mutation/oauth-standin.test.ts',
      'test/core/fast/id-token-signature.test.ts',
      'test/mutation/webcrypto.test.ts',
    ],
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
      'machines/session.machine.ts#isSessionOver',
      'machines/session.machine.ts#isSessionExpired..isExtensionDue',
      'machines/session.machine.ts#isReissueDue',
      'machines/session.machine.ts#scheduleReissue..rememberExtension',
      'core/session/current.ts',
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
    ],
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
