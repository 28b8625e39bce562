// The mutation groups of `npm run mutate` (stryker.config.mjs): each mutates a few security-critical
// modules (whole files, or `file:from-to` line ranges) and runs only the test files that guard them.

/** Mutated modules (whole files, or `file:from-to` line ranges) and the tests that guard them. */
export const groups = {
  csrf: {
    mutate: ['core/http/csrf.ts', 'core/crypto.ts:36-41'],
    tests: ['test/core/csrf.test.ts', 'test/mutation/csrf.test.ts'],
  },
  envelope: {
    mutate: ['core/engine/envelope.ts', 'core/jwe-gcm.ts'],
    tests: ['test/core/envelope.test.ts', 'test/core/resume.test.ts', 'test/mutation/envelope.test.ts', 'test/mutation/webcrypto.test.ts'],
  },
  jwt: {
    mutate: ['core/jwt.ts', 'core/jwe-cbc.ts'],
    tests: ['test/core/jwt.test.ts', 'test/mutation/jwt.test.ts', 'test/mutation/webcrypto.test.ts'],
  },
  cookies: {
    mutate: ['core/cookies.ts'],
    tests: ['test/core/session.test.ts', 'test/core/signout.test.ts', 'test/mutation/cookies.test.ts', 'test/mutation/session.test.ts'],
  },
  redirect: {
    mutate: ['core/http/dispatch.ts:49-57', 'core/http/dispatch.ts:88-115', 'core/flows/callbacks.ts:12-25', 'core/config/origins.ts'],
    // Every request resolves its callback URL: each of these tests covers every mutant of dispatch.ts,
    // so the group keeps to the files about redirects (hardening.test.ts repeats them at a cost).
    tests: ['test/core/routing.test.ts', 'test/security/redirect-proxy-origins.test.ts', 'test/mutation/redirect.test.ts'],
  },
  oauth: {
    // The checks: protected parameters, callback URL and redirect proxy, state/PKCE/nonce, the code
    // exchange and ID token signature, the key-set refetch. Not the profile mapping around them.
    mutate: [
      'core/flows/oauth.ts:42-168',
      'core/flows/oauth.ts:269-366',
      'core/oauth/exchange.ts:59-109',
      'core/oauth/server.ts:14-23',
      'core/oauth/server.ts:134-174',
    ],
    tests: [
      'test/oauth/oidc-signin.test.ts',
      'test/oauth/attacks.test.ts',
      'test/oauth/redirect-proxy.test.ts',
      'test/security/redirect-proxy-takeover.test.ts',
      'test/security/jwks-rotation.test.ts',
      'test/mutation/oauth.test.ts',
      'test/mutation/oauth-standin.test.ts',
      'test/mutation/webcrypto.test.ts',
    ],
  },
  // Account linking after an OAuth sign-in: which user an account may be linked to.
  linking: {
    mutate: ['core/flows/oauth.ts:213-263', 'core/session/token.ts:47-65'],
    tests: ['test/oauth/linking.test.ts', 'test/machines/signin-completion.model.test.ts', 'test/mutation/linking.test.ts'],
  },
  session: {
    // Expiry: when a session is over, extended or re-issued, and the expiry each one carries,
    // idle (maxAge) and absolute (absoluteMaxAge, the sign-in time a session keeps). Line ranges
    // follow the code: move them when the functions named here move.
    mutate: [
      // isSessionExpired, isExtensionDue; isReissueDue; scheduleReissue … rememberExtension
      'machines/session.machine.ts:209-218',
      'machines/session.machine.ts:256-265',
      'machines/session.machine.ts:314-342',
      'core/session/current.ts',
      // signInTimeOf, isJwtSessionEnded
      'core/session/lifecycle.ts:17-21',
      'core/session/lifecycle.ts:31-40',
      // withSignInTime; issueJwtSession's value and expiry; createSessionRow
      'core/session/issue.ts:81-84',
      'core/session/issue.ts:108-111',
      'core/session/issue.ts:118-140',
      // absoluteExpiry; getSessionAndUser, deleteExpiredSession, extendSession
      'core/flows/session.ts:65-71',
      'core/flows/session.ts:219-274',
    ],
    tests: [
      'test/core/session.test.ts',
      'test/core/database-session.test.ts',
      'test/machines/session.model.test.ts',
      'test/mutation/session.test.ts',
    ],
  },
}
