/**
 * The single-use tokens of the password flows, kept in the configured store (shared by every
 * instance), never in a cookie or the adapter's verification tokens: a token is bound to its
 * purpose (`password-verify`, `password-reset`) and to its user, lives a short time, is spent once
 * (atomically, by a claim), and only the newest token of a purpose and user is good, so a link
 * from an earlier request dies with the next one. The store keeps only hashes of the tokens.
 *
 * A token of another purpose, of another flow (an e-mail sign-in link, an OAuth `state`, a step-up
 * challenge), or made up, is found under no key of this purpose and refused.
 *
 * @module
 */
import { randomHex, sha256Hex } from '../../crypto.js'
import type { AuthStore } from '../../store/types.js'

/** What a password token is for. */
export type TokenPurpose = 'password-verify' | 'password-reset'

/** What a token was issued for: its user (its purpose is bound by the key it is kept under). */
interface TokenRecord {
  userId: string
}

/** Where the flows keep tokens: the store and the secret their keys are derived with. */
export interface TokenStore {
  store: AuthStore
  secret: string
}

const digest = (tokens: TokenStore, purpose: TokenPurpose, value: string) => sha256Hex(`${purpose}\u0000${value}\u0000${tokens.secret}`)
const recordKey = async (tokens: TokenStore, purpose: TokenPurpose, token: string) => `password:token:${await digest(tokens, purpose, token)}`
const spentKey = async (tokens: TokenStore, purpose: TokenPurpose, token: string) => `password:spent:${await digest(tokens, purpose, token)}`
const newestKey = async (tokens: TokenStore, purpose: TokenPurpose, userId: string) =>
  `password:newest:${await digest(tokens, purpose, `user:${userId}`)}`

/** Issues a token of `purpose` for `userId`, good for `maxAge` seconds; earlier ones of the pair die. */
export async function issueToken(tokens: TokenStore, purpose: TokenPurpose, userId: string, maxAge: number): Promise<string> {
  const token = randomHex(32)
  const record: TokenRecord = { userId }
  await tokens.store.put(await recordKey(tokens, purpose, token), JSON.stringify(record), maxAge)
  await tokens.store.put(await newestKey(tokens, purpose, userId), await digest(tokens, purpose, token), maxAge)
  return token
}

/**
 * The user a live, unspent token of `purpose` was issued for, without spending it (to show its
 * page, or check what comes with it first); `null` for any other token.
 */
export async function peekToken(tokens: TokenStore, purpose: TokenPurpose, token: string): Promise<string | null> {
  if (!/^[0-9a-f]{64}$/.test(token)) return null
  const stored = await tokens.store.get(await recordKey(tokens, purpose, token))
  if (stored === null) return null
  const record = JSON.parse(stored) as TokenRecord
  const newest = await tokens.store.get(await newestKey(tokens, purpose, record.userId))
  if (newest !== (await digest(tokens, purpose, token))) return null
  return record.userId
}

/**
 * Spends a token of `purpose`: the user it was issued for, once; `null` for a token that is
 * unknown, of another purpose, expired, superseded, or already spent. Of two requests racing with
 * the same token, exactly one gets the user (the spend is a claim in the store).
 */
export async function spendToken(tokens: TokenStore, purpose: TokenPurpose, token: string, maxAge: number): Promise<string | null> {
  const userId = await peekToken(tokens, purpose, token)
  if (userId === null) return null
  if (!(await tokens.store.claim(await spentKey(tokens, purpose, token), maxAge))) return null
  await tokens.store.reset(await recordKey(tokens, purpose, token))
  return userId
}

/** Ends every token of `purpose` issued for `userId` (a reset that succeeded, a changed password). */
export async function revokeTokens(tokens: TokenStore, purpose: TokenPurpose, userId: string): Promise<void> {
  await tokens.store.reset(await newestKey(tokens, purpose, userId))
}
