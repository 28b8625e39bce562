/**
 * The sentences the built-in pages say about codes, written once: every flow that shows one of
 * these situations (a sign-in's second factor, an enrolment, an e-mailed code, a re-authentication,
 * the passkey page's script) says it in these words. A leaf: pages and scripts import it without
 * an import circle.
 *
 * @module
 */
/** The sentences about codes, by situation. */
export const CODE_MESSAGES = Object.freeze({
  /** A code that is not the right one, whatever sent it. */
  wrongCode: 'That code is not right. Check it and try again.',
  /** A current TOTP code that was already used to sign in (each code signs in once). */
  codeUsed: 'That code was already used. Wait for the next code in your app, then enter it.',
  /**
   * The user's codes were spent from elsewhere: the owner learns that the password is known, and
   * which ways in still work.
   */
  codesTried:
    'Someone who knows your password is trying codes for this account, so codes from here are paused for a minute. ' +
    'You can use one of your backup codes now, sign in with a passkey if you have one, or try again in a minute. ' +
    'If this was not you, change your password.',
})
