/**
 * `authchart/password`: the password hasher (argon2id by default, scrypt, imported formats), the
 * migration hook, the password policy and the user import.
 *
 * @module
 */
export {
  DEFAULT_ARGON2_PARAMETERS,
  DEFAULT_SCRYPT_PARAMETERS,
  passwordHasher,
  type Argon2Implementation,
  type Argon2Parameters,
  type FirebaseScryptParameters,
  type ImportedFormatOptions,
  type PasswordHasher,
  type PasswordHasherOptions,
  type ScryptParameters,
  type StoredHashFormat,
} from './hashing.js'
export { firebaseStoredHash, STORED_HASH_FORMATS } from './formats/index.js'
export { verifyOrMigrate, type LegacyCheck, type MigrationResult, type VerifyLegacyPassword } from './migrate.js'
export {
  DEFAULT_BREACH_RANGE_URL,
  DEFAULT_PASSWORD_LENGTH,
  passwordLength,
  passwordPolicy,
  type BreachCheckOptions,
  type PasswordPolicyCheck,
  type PasswordPolicyOptions,
  type PolicyContext,
  type PolicyReason,
  type PolicyResult,
} from './policy.js'
export {
  importUsers,
  ImportFormatError,
  readExport,
  type ExportFormat,
  type ImportAdapter,
  type ImportReport,
  type ImportUsersOptions,
} from './import-users.js'
