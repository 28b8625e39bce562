/**
 * Roles as data, at the unit level: the built-in table, a custom role, and who may grant what.
 */
import { describe, expect, it } from 'vitest'
import { BUILT_IN_ROLES, mayGrant, organizations, roleAllows, roleRank } from '../../core/organizations.js'
import { permissionOf, rolesOf } from '../../core/organizations/roles.js'

const roles = rolesOf({ billing: { invoice: ['read', 'pay'], organization: ['read'] }, helpdesk: { member: ['read'] } })

describe('the built-in roles', () => {
  // Every permission a built-in role names, against every built-in role.
  const table: Record<string, Record<string, boolean>> = {
    'organization:read': { owner: true, admin: true, member: true },
    'organization:update': { owner: true, admin: true, member: false },
    'organization:delete': { owner: true, admin: false, member: false },
    'organization:transfer': { owner: true, admin: false, member: false },
    'member:read': { owner: true, admin: true, member: true },
    'member:update': { owner: true, admin: true, member: false },
    'member:remove': { owner: true, admin: true, member: false },
    'invitation:create': { owner: true, admin: true, member: false },
    'invitation:revoke': { owner: true, admin: true, member: false },
    'apiKey:read': { owner: true, admin: true, member: false },
    'apiKey:create': { owner: true, admin: true, member: false },
    'apiKey:revoke': { owner: true, admin: true, member: false },
    'invoice:pay': { owner: false, admin: false, member: false },
  }
  for (const [permission, expected] of Object.entries(table)) {
    for (const [role, allowed] of Object.entries(expected)) {
      it(`${role} ${allowed ? 'may' : 'may not'} ${permission}`, () => {
        expect(roleAllows(roles, role, permissionOf(permission))).toBe(allowed)
      })
    }
  }

  it('are ranked member < admin < owner', () => {
    expect([roleRank(roles, 'member'), roleRank(roles, 'admin'), roleRank(roles, 'owner')]).toEqual([0, 1, 2])
  })

  it('cannot be redefined by a custom role, nor changed after the fact', () => {
    expect(() => organizations({ roles: { owner: { everything: ['*'] } } })).toThrow(/built-in role cannot be redefined/)
    expect(() => organizations({ roles: { auditor: { log: 'read' as never } } })).toThrow(/list of action names/)
    expect(Object.isFrozen(BUILT_IN_ROLES.member.member)).toBe(true)
    expect(Object.isFrozen(roles.billing!.invoice)).toBe(true)
  })
})

describe('a custom role', () => {
  it('allows exactly its statements', () => {
    expect(roleAllows(roles, 'billing', { resource: 'invoice', action: 'pay' })).toBe(true)
    expect(roleAllows(roles, 'billing', { resource: 'invoice', action: 'refund' })).toBe(false)
    expect(roleAllows(roles, 'billing', { resource: 'member', action: 'remove' })).toBe(false)
  })

  it('allows nothing by an inherited property name (no prototype lookups)', () => {
    expect(roleAllows(roles, 'constructor', { resource: 'invoice', action: 'pay' })).toBe(false)
    expect(roleAllows(roles, 'billing', { resource: '__proto__', action: 'pay' })).toBe(false)
    expect(roleAllows(roles, 'billing', { resource: 'toString', action: 'call' })).toBe(false)
  })

  it('ranks as the lowest built-in role that holds all it allows, else as owner', () => {
    expect(roleRank(roles, 'helpdesk')).toBe(0)
    expect(roleRank(roles, 'billing')).toBe(2)
    expect(roleRank(roles, 'nobody')).toBe(Number.POSITIVE_INFINITY)
  })
})

describe('granting a role', () => {
  it('never gives a role above the granter\'s own', () => {
    expect(mayGrant(roles, 'admin', 'owner')).toBe(false)
    expect(mayGrant(roles, 'member', 'admin')).toBe(false)
    expect(mayGrant(roles, 'admin', 'billing')).toBe(false)
    expect(mayGrant(roles, 'billing', 'admin')).toBe(false)
  })

  it('gives a role at or below the granter\'s, and an owner any configured one', () => {
    expect(mayGrant(roles, 'admin', 'admin')).toBe(true)
    expect(mayGrant(roles, 'admin', 'member')).toBe(true)
    expect(mayGrant(roles, 'admin', 'helpdesk')).toBe(true)
    expect(mayGrant(roles, 'owner', 'billing')).toBe(true)
    expect(mayGrant(roles, 'owner', 'owner')).toBe(true)
  })

  it('never gives an unknown role, nor lets an unknown role grant', () => {
    expect(mayGrant(roles, 'owner', 'root')).toBe(false)
    expect(mayGrant(roles, 'root', 'member')).toBe(false)
  })
})

describe('a permission', () => {
  it('is written resource:action', () => {
    expect(permissionOf('invoice:pay')).toEqual({ resource: 'invoice', action: 'pay' })
    for (const wrong of ['invoice', 'invoice:', ':pay', 'a:b:c', 'in voice:pay']) expect(() => permissionOf(wrong)).toThrow(TypeError)
  })
})
