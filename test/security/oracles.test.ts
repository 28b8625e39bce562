/**
 * The fuzz suite's oracles judged on their own: a check that lets an attack through would make
 * every fuzz run meaningless, so each refusal the suite relies on is pinned here.
 */
import { describe, expect, it } from 'vitest'
import { badBody, badLogOutput, offOriginRedirect } from './fuzz/oracles.js'

const REQUEST = 'https://authchart.test/auth/callback/credentials'

describe('the redirect oracle', () => {
  it.each([
    '/\\evil.example',
    '\\/evil.example',
    '\\\\evil.example',
    '/%5Cevil.example',
    '/%2F/evil.example',
    '%2F%2Fevil.example',
    '//evil.example',
    '///evil.example',
    '/\t/evil.example',
    '/\n/evil.example',
    '\t//evil.example',
    ' //evil.example',
    '\u0000//evil.example',
    '/\r\n/evil.example',
    'https:\\\\evil.example',
    'http://evil.example',
    'HTTPS://EVIL.EXAMPLE/',
    'https://authchart.test@evil.example/',
    'https://authchart.test.evil.example/',
    'https://evil.example\\@authchart.test/',
    'https://evil.example#https://authchart.test',
    'https://authchart.test:444/',
    'http://authchart.test/',
    'javascript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'https://[::1]/',
  ])('refuses %j as off-origin', (location) => {
    expect(offOriginRedirect(location, REQUEST)).toBeDefined()
  })

  it.each([
    '/',
    '/dashboard?x=//evil.example',
    'https://authchart.test/',
    'https://authchart.test/%5Cevil.example',
    'https:evil.example',
    'https://AUTHCHART.test:443/x',
    '//authchart.test/x',
    '/\t/authchart.test',
    'https://evil.example@authchart.test/',
    '?next=https://evil.example',
    '#//evil.example',
    'x',
  ])('accepts %j as on our origin', (location) => {
    expect(offOriginRedirect(location, REQUEST)).toBeUndefined()
  })

  it.each(['https:evil.example', 'https:/evil.example', 'https:\\\\evil.example'])(
    'refuses %j from a plain-http page, where a browser reads it as another host',
    (location) => {
      expect(offOriginRedirect(location, 'http://authchart.test/auth/signin')).toBeDefined()
    },
  )

  it('accepts an allowed endpoint exactly, not its neighbours', () => {
    const allowed = { endpoints: ['https://op.example/auth'] }
    expect(offOriginRedirect('https://op.example/auth?client_id=x', REQUEST, allowed)).toBeUndefined()
    expect(offOriginRedirect('https://op.example/authx', REQUEST, allowed)).toBeDefined()
    expect(offOriginRedirect('https://op.example/other', REQUEST, allowed)).toBeDefined()
  })
})

describe('the log oracle', () => {
  it('accepts a logger line and the stack frames of its cause', () => {
    expect(badLogOutput('[auth][error] InvalidCheck: state mismatch', [])).toBeUndefined()
    expect(badLogOutput('[auth][cause]: TypeError: x\n    at f (/a/b.ts:1:2)\n    at /a/c.ts:3:4', [])).toBeUndefined()
  })

  it.each([
    ['a forged line', '[auth][error] InvalidCallbackUrl: Received: /x\n[auth][info] admin signed in'],
    ['a carriage return', '[auth][error] InvalidCallbackUrl: Received: /x\r[auth][info] admin signed in'],
    ['an escape sequence', '[auth][error] x \u001b[2J'],
    ['a line separator', '[auth][error] x\u2028y'],
    ['output not from the logger', 'hello'],
    ['a secret', '[auth][debug]: adapter_createSession {"sessionToken":"0123456789abcdef"}'],
  ])('refuses %s', (_name, output) => {
    expect(badLogOutput(output, ['0123456789abcdef'])).toBeDefined()
  })
})

describe('the body oracle', () => {
  it('refuses a stack trace, a secret and reflected markup', () => {
    expect(badBody('Error: x\n    at f (/app/a.js:1:2)', 'text/plain', [], '<fuzz-xss')).toBeDefined()
    expect(badBody('{"token":"0123456789abcdef"}', 'application/json', ['0123456789abcdef'], '<fuzz-xss')).toBeDefined()
    expect(badBody('<p><fuzz-xss></p>', 'text/html', [], '<fuzz-xss')).toBeDefined()
    expect(badBody('<p>&lt;fuzz-xss&gt;</p>', 'text/html', [], '<fuzz-xss')).toBeUndefined()
  })
})
