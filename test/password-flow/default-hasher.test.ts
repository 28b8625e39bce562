/**
 * The password flows with the default hasher (argon2id, `passwordHasher()`): a sign-up, its
 * verification and a sign-in end to end, and an imported bcrypt hash re-hashed at its first
 * successful sign-in.
 */
import bcrypt from 'bcryptjs'
import { describe, expect, it } from 'vitest'
import { Client, ORIGIN, setCookie } from '../fixtures/http.js'
import { addUser, passwordWorld, postPassword, signInWithPassword } from './fixtures.js'
import Password from '../../providers/password.js'

const SESSION_COOKIE = '__Secure-authjs.session-token'

/** A world whose provider hashes with the default hasher, not the test one. */
function defaultHasherWorld() {
  const world = passwordWorld()
  const own = world.config.providers[0] as unknown as { send: unknown }
  world.config.providers[0] = Password({ send: own.send as never }) as never
  return world
}

describe('the password flows with the default hasher', () => {
  it('signs up, verifies and signs in, storing an argon2id hash', async () => {
    const world = defaultHasherWorld()
    await postPassword(new Client(world.config), { intent: 'signup', email: 'new@example.com', password: 'a new password' })
    const token = new URL(world.mailbox.at(-1)!.url).searchParams.get('token')!
    expect((await postPassword(new Client(world.config), { intent: 'verify', token, password: 'a new password' })).headers.get('location')).toBe(`${ORIGIN}/auth/signin`)
    const [stored] = [...world.store.passwords.values()]
    expect(stored).toMatch(/^\$argon2id\$v=19\$/)
    const response = await signInWithPassword(new Client(world.config), 'new@example.com', 'a new password')
    expect(setCookie(response, SESSION_COOKIE)).toBeDefined()
  })

  it('re-hashes an imported bcrypt hash at its first successful sign-in', async () => {
    const world = defaultHasherWorld()
    const user = await addUser(world, 'imported@example.com', null)
    await world.config.adapter!.setUserPassword!(user.id, bcrypt.hashSync('imported secret', 4))
    const wrong = await signInWithPassword(new Client(world.config), 'imported@example.com', 'not it')
    expect(setCookie(wrong, SESSION_COOKIE)).toBeUndefined()
    expect(world.store.passwords.get(user.id)).toMatch(/^\$2[aby]\$/)
    const right = await signInWithPassword(new Client(world.config), 'imported@example.com', 'imported secret')
    expect(right.headers.get('location')).toBe(`${ORIGIN}/dashboard`)
    expect(world.store.passwords.get(user.id)).toMatch(/^\$argon2id\$/)
  })
})
