/**
 * The password provider: sign-up with an e-mailed proof of the address, sign-in against the stored
 * hash (through the credentials rate limits, the second factor and step-up), forgotten-password
 * reset and change, as charts of their own. The hash is stored through the adapter's
 * `getUserPassword` / `setUserPassword` (the memory and PostgreSQL adapters have them).
 *
 * @module
 */
import { PROVIDER_FLOW } from '../core/modules.js'
import { passwordHasher } from '../core/password/hashing.js'
import { passwordModules } from '../core/flows/password/index.js'
import { PASSWORD_TYPE, type PasswordConfig, type PasswordOptions } from '../core/flows/password/options.js'

export type {
  PasswordConfig,
  PasswordHasher,
  PasswordMail,
  PasswordMailKind,
  PasswordOptions,
  PasswordPolicy,
  PasswordSender,
  PolicyVerdict,
} from '../core/flows/password/options.js'

/**
 * Creates a password provider.
 *
 * @example
 * ```ts
 * import Password from 'authchart/providers/password'
 *
 * const config = {
 *   adapter, // stores users and their password hashes
 *   providers: [Password({ send: (mail) => mailer.send(mail) })],
 * }
 * ```
 */
export default function Password(options: PasswordOptions = {}): PasswordConfig {
  const { id = 'password', name = 'Password', requireEmailVerification = true, hasher = passwordHasher(), ...rest } = options
  return {
    id,
    name,
    // The sign-in page's form: the credentials form with these two fields.
    credentials: {
      email: { label: 'Email', type: 'email', autocomplete: 'username', required: true },
      password: { label: 'Password', type: 'password', autocomplete: 'current-password', required: true },
    },
    ...rest,
    hasher,
    requireEmailVerification,
    // The flows the registry reads from the provider (see core/modules.ts): the core imports none of them.
    [PROVIDER_FLOW]: passwordModules,
    type: PASSWORD_TYPE,
  } as PasswordConfig
}
