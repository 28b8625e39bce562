/**
 * The handler's answer (status, headers, body without web objects) must carry exactly what the web
 * `Response` undici builds from the same internal response carries: the reference below is how
 * `toResponse` built it before answers existed.
 */
import { describe, expect, it } from 'vitest'
import { Answer, toAnswer } from '../../core/http/answer.js'
import { serializeCookie } from '../../core/cookies.js'
import { encodeLocation } from '../../core/http/dispatch.js'
import { JSON_NO_STORE_HEADERS } from '../../core/http/handlers.js'
import { pagePolicy } from '../../core/pages/policy.js'
import type { ResponseInternal } from '../../core/types.js'

/**
 * The web Response as undici builds it from an internal response, and every page under the one
 * page policy unless it set its own (the answer guards pages in one place).
 */
function reference(internal: ResponseInternal): Response {
  const headers = new Headers(internal.headers)
  if (headers.get('content-type')?.startsWith('text/html') && !headers.has('content-security-policy')) {
    headers.set('Content-Security-Policy', pagePolicy())
    headers.set('X-Frame-Options', 'DENY')
  }
  for (const cookie of internal.cookies ?? []) headers.append('Set-Cookie', serializeCookie(cookie))
  let body = internal.body as BodyInit | null | undefined
  const contentType = headers.get('content-type')
  if (contentType === 'application/json') body = JSON.stringify(internal.body)
  else if (contentType === 'application/x-www-form-urlencoded') body = new URLSearchParams(internal.body as Record<string, string>).toString()
  if (internal.redirect) headers.set('Location', encodeLocation(internal.redirect))
  return new Response(body ?? null, { headers, status: internal.redirect ? 302 : (internal.status ?? 200) })
}

async function seen(answer: Answer | Response) {
  if (answer instanceof Response) {
    return { status: answer.status, headers: [...answer.headers], body: new Uint8Array(await answer.arrayBuffer()) }
  }
  const body = answer.body === null ? new Uint8Array(0) : typeof answer.body === 'string' ? new TextEncoder().encode(answer.body) : answer.body
  return { status: answer.status, headers: answer.headers.map(([name, value]) => [name, value]), body }
}

const cookie = (name: string, value: string) => ({ name, value, options: { path: '/', httpOnly: true, sameSite: 'lax' as const } })

const cases: [string, ResponseInternal][] = [
  ['a JSON document under the shared no-store headers', { headers: JSON_NO_STORE_HEADERS, body: { user: { name: 'Zoë' } } }],
  ['a JSON document with cookies set', { headers: JSON_NO_STORE_HEADERS, body: { csrfToken: 't' }, cookies: [cookie('b', '1'), cookie('a', 'x y')] }],
  ['a JSON document with no body', { headers: JSON_NO_STORE_HEADERS }],
  ['a JSON document under a status', { status: 400, headers: { 'Content-Type': 'application/json' }, body: null }],
  ['a redirect with cookies', { redirect: 'https://app.example/after?x=1', cookies: [cookie('session', 'abc')] }],
  ['a redirect outside ASCII', { redirect: '/dashboard/日本?q=é' }],
  ['a page', { status: 200, headers: { 'Content-Type': 'text/html', 'Cache-Control': 'no-store' }, body: '<p>é</p>' }],
  ['a page with its own policy', { headers: { 'Content-Type': 'text/html', 'Content-Security-Policy': "frame-ancestors https://op.example" }, body: '<p>bye</p>' }],
  ['a text body without a type', { body: 'plain' }],
  ['an empty text body', { body: '' }],
  ['bytes', { headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array([0, 1, 255]) }],
  ['a form', { headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: { a: '1 2', b: 'é' } }],
  ['a 404 with an expired cookie and no body', { status: 404, cookies: [{ name: 'c', value: '', options: { maxAge: 0, path: '/' } }] }],
  ['repeated names in two cases, values with spaces at their ends', { headers: [['X-A', ' one '], ['x-a', 'two\t'], ['Vary', 'Cookie']], body: 'ok' }],
  ['Set-Cookie among the headers and as cookies', { headers: [['Set-Cookie', 'first=1'], ['Z-Last', 'z']], cookies: [cookie('second', '2')] }],
  ['headers given as a Headers object', { headers: new Headers([['X-B', '2'], ['X-A', '1'], ['Set-Cookie', 'k=v']]), body: 'ok' }],
]

describe('an answer carries what the web Response would', () => {
  it.each(cases)('for %s', async (_name, internal) => {
    const answer = await toAnswer(internal)
    expect(await seen(answer)).toEqual(await seen(reference(internal)))
  })

  it.each([
    ['a header value with a line break', { headers: { 'X-Injected': 'a\r\nSet-Cookie: evil=1' } }],
    ['a header value with NUL', { headers: { 'X-Nul': 'a\u0000b' } }],
    ['a header name that is not a token', { headers: { 'Bad Name': 'x' } }],
    ['a status outside 200–599', { status: 199 }],
    ['a body on a 204', { status: 204, body: 'x' }],
  ] as [string, ResponseInternal][])('refuses %s, as the web Response does', async (_name, internal) => {
    expect(() => reference(internal)).toThrow()
    await expect(async () => toAnswer(internal)).rejects.toThrow()
  })
})
