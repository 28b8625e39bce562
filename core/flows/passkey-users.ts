/**
 * What the first factors that adopt users by address (e-mail, OAuth, credentials linking) ask about
 * passkey users, without loading the WebAuthn flow: a configuration without passkeys never does.
 *
 * @module
 */
import type { Adapter, AdapterUser } from '../adapters.js'

/**
 * Whether `user` was signed up with a passkey for an address nobody verified: its address is not
 * verified and a passkey opens it. Such a user is never adopted by its address, by the e-mail
 * flow, OAuth or credentials linking: whoever typed the address at sign-up never proved it was
 * theirs, and the passkey they hold would still open the account the address's owner then uses
 * (a pre-account takeover). Any passkey counts, also one added later: the holder of such an
 * account can add passkeys and link accounts of their own, so nothing else about it tells the
 * address's owner apart from someone who squats it.
 */
export async function isUnverifiedPasskeyUser(adapter: Adapter, user: AdapterUser): Promise<boolean> {
  if (user.emailVerified || !adapter.listAuthenticatorsByUserId) return false
  const passkeys = await adapter.listAuthenticatorsByUserId(String(user.id))
  return passkeys.length > 0
}
