import { hash as nativeHash, verify as nativeVerify } from '@node-rs/argon2'
import { describe, expect, it, vi } from 'vitest'
import { DEFAULT_ARGON2_PARAMETERS, passwordHasher } from '../../core/password/hashing.js'
import { verifyOrMigrate } from '../../core/password/migrate.js'

// @node-rs/argon2's const enum Algorithm, by value (isolated modules cannot read it).
const Algorithm = { Argon2i: 1, Argon2id: 2 } as const
const cheap = { memoryCost: 1024, timeCost: 1, parallelism: 1 }
const native = passwordHasher({ argon2: cheap, argon2Implementation: 'native' })
const portable = passwordHasher({ argon2: cheap, argon2Implementation: 'portable' })

describe('argon2id by default', () => {
  it('writes RFC 9106’s second recommended parameters into a PHC string', async () => {
    expect(DEFAULT_ARGON2_PARAMETERS).toEqual({ memoryCost: 65536, timeCost: 3, parallelism: 4 })
    const stored = await passwordHasher().hash('correct horse')
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=65536,t=3,p=4\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
  })

  it('keeps the defaults for the parameters an app leaves unset', async () => {
    const stored = await passwordHasher({ argon2: { memoryCost: 2048, timeCost: 1 } }).hash('x')
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=2048,t=1,p=4\$/)
  })

  it('salts every hash afresh', async () => {
    expect(await native.hash('same')).not.toBe(await native.hash('same'))
  })

  it('accepts the password it hashed and refuses another', async () => {
    const stored = await native.hash('pässwörd')
    expect(await native.verify(stored, 'pässwörd')).toEqual({ valid: true, needsRehash: false })
    expect(await native.verify(stored, 'passwörd')).toEqual({ valid: false, needsRehash: false })
    expect(await native.verify(stored, '')).toEqual({ valid: false, needsRehash: false })
  })

  it('refuses a stored hash whose digest was changed in one character', async () => {
    const stored = await native.hash('pw')
    const tampered = stored.slice(0, -2) + (stored.at(-2) === 'A' ? 'B' : 'A') + stored.at(-1)
    expect((await native.verify(tampered, 'pw')).valid).toBe(false)
  })

  it('rejects parameters outside argon2’s range when the hasher is made', () => {
    expect(() => passwordHasher({ argon2: { memoryCost: 4 } })).toThrow(RangeError)
    expect(() => passwordHasher({ argon2: { timeCost: 0 } })).toThrow(RangeError)
    expect(() => passwordHasher({ argon2: { parallelism: 1.5 } })).toThrow(RangeError)
    expect(() => passwordHasher({ algorithm: 'scrypt', scrypt: { ln: 30 } })).toThrow(RangeError)
  })
})

describe('the native and portable argon2 write and read the same strings', () => {
  it('verifies with the portable implementation what the native one hashed, and the reverse', async () => {
    const fromNative = await native.hash('cross check')
    const fromPortable = await portable.hash('cross check')
    expect(await portable.verify(fromNative, 'cross check')).toEqual({ valid: true, needsRehash: false })
    expect(await native.verify(fromPortable, 'cross check')).toEqual({ valid: true, needsRehash: false })
    expect((await portable.verify(fromNative, 'cross chek')).valid).toBe(false)
  })

  it('writes what @node-rs/argon2’s own verify accepts, and accepts what its own hash writes', async () => {
    const ours = await portable.hash('library check')
    expect(await nativeVerify(ours, 'library check')).toBe(true)
    const theirs = await nativeHash('library check', { algorithm: Algorithm.Argon2id, ...cheap })
    expect(await portable.verify(theirs, 'library check')).toEqual({ valid: true, needsRehash: false })
  })

  it('agrees at the default parameters', async () => {
    const stored = await passwordHasher({ argon2Implementation: 'native' }).hash('defaults')
    expect(await passwordHasher({ argon2Implementation: 'portable' }).verify(stored, 'defaults')).toEqual({
      valid: true,
      needsRehash: false,
    })
  }, 60_000)
})

describe('needsRehash', () => {
  it('is set for a valid hash with other argon2 parameters', async () => {
    const stored = await native.hash('pw')
    const stronger = passwordHasher({ argon2: { ...cheap, timeCost: 2 } })
    expect(await stronger.verify(stored, 'pw')).toEqual({ valid: true, needsRehash: true })
    expect(await passwordHasher({ argon2: { ...cheap, memoryCost: 2048 } }).verify(stored, 'pw')).toEqual({ valid: true, needsRehash: true })
    expect(await passwordHasher({ argon2: { ...cheap, parallelism: 2 } }).verify(stored, 'pw')).toEqual({ valid: true, needsRehash: true })
  })

  it('is set for argon2i, and for the other algorithm than the configured one', async () => {
    const argon2i = await nativeHash('pw', { algorithm: Algorithm.Argon2i, ...cheap })
    expect(await native.verify(argon2i, 'pw')).toEqual({ valid: true, needsRehash: true })
    const scrypt = passwordHasher({ algorithm: 'scrypt', scrypt: { ln: 10 } })
    const scryptHash = await scrypt.hash('pw')
    expect(await native.verify(scryptHash, 'pw')).toEqual({ valid: true, needsRehash: true })
    expect(await scrypt.verify(await native.hash('pw'), 'pw')).toEqual({ valid: true, needsRehash: true })
  })

  it('is not set for a wrong password, whatever the hash', async () => {
    const argon2i = await nativeHash('pw', { algorithm: Algorithm.Argon2i, ...cheap })
    expect(await native.verify(argon2i, 'other')).toEqual({ valid: false, needsRehash: false })
  })
})

describe('scrypt for environments without argon2', () => {
  it('writes $scrypt$ln=17,r=8,p=1 by default and verifies it', async () => {
    const hasher = passwordHasher({ algorithm: 'scrypt' })
    const stored = await hasher.hash('scrypt pw')
    expect(stored).toMatch(/^\$scrypt\$ln=17,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
    expect(await hasher.verify(stored, 'scrypt pw')).toEqual({ valid: true, needsRehash: false })
    expect(await hasher.verify(stored, 'scrypt pX')).toEqual({ valid: false, needsRehash: false })
    expect(await passwordHasher({ algorithm: 'scrypt', scrypt: { r: 16 } }).verify(stored, 'scrypt pw')).toEqual({
      valid: true,
      needsRehash: true,
    })
  }, 30_000)
})

describe('dummyVerify', () => {
  it('costs about as much as verifying a real hash at the configured parameters', async () => {
    // Samples interleaved, so a burst of load on the machine hits both alike.
    const hasher = passwordHasher({ argon2: { memoryCost: 16384, timeCost: 2, parallelism: 1 } })
    const stored = await hasher.hash('pw')
    const time = async (run: () => Promise<unknown>) => {
      const start = performance.now()
      await run()
      return performance.now() - start
    }
    const real: number[] = []
    const dummy: number[] = []
    // Eleven pairs: under a loaded machine's bursts, seven left the minimum of one side still inflated.
    for (let i = 0; i < 11; i++) {
      real.push(await time(() => hasher.verify(stored, 'wrong')))
      dummy.push(await time(() => hasher.dummyVerify('wrong')))
    }
    // The fastest of each: load on the machine only ever adds time, so the minimum is the cost.
    const ratio = Math.min(...dummy) / Math.min(...real)
    expect(ratio).toBeGreaterThan(0.5)
    expect(ratio).toBeLessThan(2)
  }, 30_000)
})

describe('verifyOrMigrate', () => {
  it('re-hashes a valid imported hash and leaves a current one alone', async () => {
    const current = await native.hash('pw')
    expect(await verifyOrMigrate(native, current, 'pw')).toEqual({ valid: true, checkedBy: 'stored' })
    const argon2i = await nativeHash('pw', { algorithm: Algorithm.Argon2i, ...cheap })
    const migrated = await verifyOrMigrate(native, argon2i, 'pw')
    expect(migrated.valid).toBe(true)
    expect(await native.verify(migrated.newHash!, 'pw')).toEqual({ valid: true, needsRehash: false })
    expect(await verifyOrMigrate(native, argon2i, 'wrong')).toEqual({ valid: false, checkedBy: 'stored' })
  })

  it('never asks the legacy system about a user who has a hash', async () => {
    const verifyLegacyPassword = vi.fn(async () => true)
    const result = await verifyOrMigrate(native, await native.hash('pw'), 'wrong', { user: { id: 'u1' }, verifyLegacyPassword })
    expect(result.valid).toBe(false)
    expect(verifyLegacyPassword).not.toHaveBeenCalled()
  })

  it('asks the legacy system once for a user without a hash and hands back our hash to store', async () => {
    const user = { id: 'u1' }
    const verifyLegacyPassword = vi.fn(async (_user: typeof user, password: string) => password === 'legacy pw')
    const first = await verifyOrMigrate(native, null, 'legacy pw', { user, verifyLegacyPassword })
    expect(first).toMatchObject({ valid: true, checkedBy: 'legacy' })
    expect(verifyLegacyPassword).toHaveBeenCalledOnce()
    expect(verifyLegacyPassword).toHaveBeenCalledWith(user, 'legacy pw')
    // The caller stored first.newHash: the next sign-in uses it and the legacy system is not asked.
    const second = await verifyOrMigrate(native, first.newHash!, 'legacy pw', { user, verifyLegacyPassword })
    expect(second).toEqual({ valid: true, checkedBy: 'stored' })
    expect(verifyLegacyPassword).toHaveBeenCalledOnce()
  })

  it('refuses when the legacy system says no, or throws, without throwing itself', async () => {
    const user = { id: 'u1' }
    expect(await verifyOrMigrate(native, null, 'pw', { user, verifyLegacyPassword: async () => false })).toEqual({
      valid: false,
      checkedBy: 'legacy',
    })
    const down = await verifyOrMigrate(native, null, 'pw', {
      user,
      verifyLegacyPassword: async () => {
        throw new Error('legacy database unreachable')
      },
    })
    expect(down).toEqual({ valid: false, checkedBy: 'legacy', legacyFailed: true })
  })

  it('refuses a user with neither hash nor hook after a full-cost dummy hash', async () => {
    const dummyVerify = vi.spyOn(native, 'dummyVerify')
    expect(await verifyOrMigrate(native, null, 'pw')).toEqual({ valid: false, checkedBy: 'none' })
    expect(dummyVerify).toHaveBeenCalledWith('pw')
  })
})
