/**
 * The credentials provider: the application checks what the user submits (a password, a one-time
 * code) in `authorize`. Same factory and options as Auth.js's `Credentials`.
 *
 * @module
 */
import type { CredentialInput, CredentialsConfig, UserOptions } from '../core/types.js'

export type { CredentialInput, CredentialsConfig }

/** Options of {@link Credentials}: any field of the provider, `authorize` above all. */
export type CredentialsOptions<Inputs extends Record<string, CredentialInput>> = UserOptions<
  CredentialsConfig<Inputs>
>

/**
 * Creates a credentials provider.
 *
 * @example
 * ```ts
 * Credentials({
 *   credentials: { email: { label: 'Email' }, password: { type: 'password' } },
 *   async authorize({ email, password }) {
 *     const user = await users.verify(String(email), String(password))
 *     return user ?? null // null rejects with ?error=CredentialsSignin&code=credentials
 *   },
 * })
 * ```
 */
export default function Credentials<
  Inputs extends Record<string, CredentialInput> = Record<string, CredentialInput>,
>(options: CredentialsOptions<Inputs>): CredentialsConfig<Inputs> {
  return {
    id: 'credentials',
    name: 'Credentials',
    type: 'credentials',
    credentials: {} as Inputs,
    authorize: () => null,
    // Auth.js merges `options` over the defaults when the config is read; so do we.
    options,
  } as CredentialsConfig<Inputs>
}
