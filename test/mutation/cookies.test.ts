/**
 * Cookie serialisation, parsing and chunking byte for byte: the attributes that keep a session
 * cookie out of scripts (HttpOnly), off plain HTTP (Secure) and off cross-site requests (SameSite),
 * the names browsers only accept from a secure origin, and the refusal of anything that would let
 * a value, path or domain break out of its `Set-Cookie` header.
 */
import { describe, expect, it } from 'vitest'
import {
  MAX_CHUNKED_VALUE,
  MAX_SESSION_CHUNKS,
  SESSION_CHUNK_SIZE,
  clearChunkedCookie,
  defaultCookies,
  expiredCookie,
  mergeCookies,
  parseCookieHeader,
  readChunkedCookie,
  serializeCookie,
  writeChunkedCookie,
} from '../../core/cookies.js'

const EXPIRES = new Date(Date.UTC(2030, 0, 2, 3, 4, 5, 678))

describe('the default cookies', () => {
  it('are all HttpOnly, SameSite=Lax on /, Secure with secure cookies, with the prefixes browsers enforce', () => {
    const secure = defaultCookies(true)
    expect(secure.sessionToken).toEqual({
      name: '__Secure-authjs.session-token',
      options: { httpOnly: true, sameSite: 'lax', path: '/', secure: true },
    })
    expect(secure.csrfToken.name).toBe('__Host-authjs.csrf-token')
    expect(secure.callbackUrl.name).toBe('__Secure-authjs.callback-url')
    expect(secure.pkceCodeVerifier).toEqual({
      name: '__Secure-authjs.pkce.code_verifier',
      options: { httpOnly: true, sameSite: 'lax', path: '/', secure: true, maxAge: 900 },
    })
    expect(secure.state).toEqual({
      name: '__Secure-authjs.state',
      options: { httpOnly: true, sameSite: 'lax', path: '/', secure: true, maxAge: 900 },
    })
    expect(secure.nonce.name).toBe('__Secure-authjs.nonce')
    expect(secure.webauthnChallenge).toEqual({
      name: '__Secure-authjs.challenge',
      options: { httpOnly: true, sameSite: 'lax', path: '/', secure: true, maxAge: 900 },
    })
    expect(secure.flowState).toEqual({
      name: '__Secure-authchart.flow',
      options: { httpOnly: true, sameSite: 'lax', path: '/', secure: true, maxAge: 900 },
    })
    for (const cookie of Object.values(secure)) expect(cookie.options).toMatchObject({ httpOnly: true, secure: true })
  })

  it('drop the prefixes and Secure on plain HTTP, keeping HttpOnly', () => {
    const plain = defaultCookies(false)
    expect(plain.sessionToken).toEqual({
      name: 'authjs.session-token',
      options: { httpOnly: true, sameSite: 'lax', path: '/', secure: false },
    })
    expect(plain.csrfToken.name).toBe('authjs.csrf-token')
    for (const cookie of Object.values(plain)) {
      expect(cookie.name).not.toMatch(/^__/)
      expect(cookie.options.httpOnly).toBe(true)
    }
  })

  it('give each key its own options object, so changing one never changes another', () => {
    const cookies = defaultCookies(true)
    expect(cookies.sessionToken.options).not.toBe(cookies.csrfToken.options)
  })

  it('take overrides per key, keeping the defaults of what is not overridden', () => {
    const defaults = defaultCookies(true)
    expect(mergeCookies(defaults, undefined)).toBe(defaults)
    const merged = mergeCookies(defaults, {
      sessionToken: { name: 'my-session', options: { domain: 'example.com' } },
      csrfToken: { options: { sameSite: 'strict' } },
    })
    expect(merged.sessionToken).toEqual({
      name: 'my-session',
      options: { httpOnly: true, sameSite: 'lax', path: '/', secure: true, domain: 'example.com' },
    })
    expect(merged.csrfToken).toEqual({
      name: '__Host-authjs.csrf-token',
      options: { httpOnly: true, sameSite: 'strict', path: '/', secure: true },
    })
    expect(merged.state).toBe(defaults.state)
  })
})

describe('serializeCookie', () => {
  it('writes every attribute in the order of the cookie package', () => {
    expect(
      serializeCookie({
        name: 'n',
        value: 'v',
        options: {
          maxAge: 60,
          domain: 'example.com',
          path: '/p',
          expires: EXPIRES,
          httpOnly: true,
          secure: true,
          partitioned: true,
          priority: 'high',
          sameSite: 'lax',
        },
      }),
    ).toBe('n=v; Max-Age=60; Domain=example.com; Path=/p; Expires=Wed, 02 Jan 2030 03:04:05 GMT; HttpOnly; Secure; Partitioned; Priority=High; SameSite=Lax')
  })

  it('writes the session cookie as a browser must keep it from scripts', () => {
    const { sessionToken } = defaultCookies(true)
    expect(serializeCookie({ ...sessionToken, value: 'eyJ.a.b', options: { ...sessionToken.options, expires: EXPIRES } })).toBe(
      '__Secure-authjs.session-token=eyJ.a.b; Path=/; Expires=Wed, 02 Jan 2030 03:04:05 GMT; HttpOnly; Secure; SameSite=Lax',
    )
  })

  it('leaves out what is false or absent, and writes Max-Age=0 for a deletion', () => {
    expect(serializeCookie({ name: 'n', value: '', options: { httpOnly: false, secure: false, sameSite: false, maxAge: 0 } })).toBe(
      'n=; Max-Age=0',
    )
    expect(serializeCookie({ name: 'n', value: 'v', options: {} })).toBe('n=v')
  })

  it('writes SameSite=Strict for true, and each mode and priority capitalised', () => {
    const same = (sameSite: boolean | 'lax' | 'strict' | 'none') => serializeCookie({ name: 'n', value: 'v', options: { sameSite } })
    expect(same(true)).toBe('n=v; SameSite=Strict')
    expect(same('strict')).toBe('n=v; SameSite=Strict')
    expect(same('none')).toBe('n=v; SameSite=None')
    expect(serializeCookie({ name: 'n', value: 'v', options: { priority: 'low' } })).toBe('n=v; Priority=Low')
    expect(serializeCookie({ name: 'n', value: 'v', options: { priority: 'medium' } })).toBe('n=v; Priority=Medium')
  })

  it('percent-encodes a value that is not plain, and leaves tokens as they are', () => {
    expect(serializeCookie({ name: 'n', value: "AZaz09._~!*'()-", options: {} })).toBe("n=AZaz09._~!*'()-")
    expect(serializeCookie({ name: 'n', value: 'a b;c=d,e"f\\g', options: {} })).toBe('n=a%20b%3Bc%3Dd%2Ce%22f%5Cg')
    expect(serializeCookie({ name: 'n', value: 'token|hash', options: {} })).toBe('n=token%7Chash')
    expect(serializeCookie({ name: 'n', value: 'https://a.example/x?y=1', options: {} })).toBe('n=https%3A%2F%2Fa.example%2Fx%3Fy%3D1')
    // Nothing plain in it at all: still encoded, a space or `;` never reaches the header raw.
    expect(serializeCookie({ name: 'n', value: ' ;=', options: {} })).toBe('n=%20%3B%3D')
  })

  it.each(['bad name', 'semi;colon', 'eq=ual', '', 'new\nline', 'ä'])('refuses the name %j', (name) => {
    expect(() => serializeCookie({ name, value: 'v', options: {} })).toThrow(new TypeError(`invalid cookie name: ${name}`))
  })

  it('accepts every token character in a name', () => {
    const name = "!#$%&'*+-.^_`|~09AZaz"
    expect(serializeCookie({ name, value: 'v', options: {} })).toBe(`${name}=v`)
  })

  it.each(['/a;b', '/a\nb', '/\u007f', '/ä'])('refuses the path %j (header injection)', (path) => {
    expect(() => serializeCookie({ name: 'n', value: 'v', options: { path } })).toThrow(new TypeError('invalid path for n'))
  })

  it('accepts a path with spaces, = and other printable characters but ;', () => {
    expect(serializeCookie({ name: 'n', value: 'v', options: { path: '/a b=c~' } })).toBe('n=v; Path=/a b=c~')
  })

  it.each(['example.com;x=y', 'exa mple.com', '-bad.com', 'bad-.com', 'a..b', 'ex\nample.com', `${'a'.repeat(64)}.com`])(
    'refuses the domain %j',
    (domain) => {
      expect(() => serializeCookie({ name: 'n', value: 'v', options: { domain } })).toThrow(new TypeError('invalid domain for n'))
    },
  )

  it('accepts a leading-dot domain, digits and inner hyphens', () => {
    expect(serializeCookie({ name: 'n', value: 'v', options: { domain: '.sub-1.Example.com' } })).toBe('n=v; Domain=.sub-1.Example.com')
    expect(serializeCookie({ name: 'n', value: 'v', options: { domain: `${'a'.repeat(63)}.com` } })).toBe(`n=v; Domain=${'a'.repeat(63)}.com`)
    // Labels of one character, first and later.
    expect(serializeCookie({ name: 'n', value: 'v', options: { domain: 'a.b.c' } })).toBe('n=v; Domain=a.b.c')
  })

  it.each([1.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses maxAge %s', (maxAge) => {
    expect(() => serializeCookie({ name: 'n', value: 'v', options: { maxAge } })).toThrow(new TypeError('invalid maxAge for n'))
  })

  it('formats each expiry to its own second', () => {
    const a = serializeCookie({ name: 'n', value: 'v', options: { expires: new Date(Date.UTC(2030, 0, 1, 0, 0, 0)) } })
    const b = serializeCookie({ name: 'n', value: 'v', options: { expires: new Date(Date.UTC(2030, 0, 1, 0, 0, 1)) } })
    const c = serializeCookie({ name: 'n', value: 'v', options: { expires: new Date(Date.UTC(2030, 0, 1, 0, 0, 0, 999)) } })
    expect(a).toBe('n=v; Expires=Tue, 01 Jan 2030 00:00:00 GMT')
    expect(b).toBe('n=v; Expires=Tue, 01 Jan 2030 00:00:01 GMT')
    expect(c).toBe(a)
  })
})

describe('parseCookieHeader', () => {
  it('reads names and values, trimming spaces and tabs, first occurrence winning', () => {
    const cookies = parseCookieHeader(' a=1 ;\tb = two\t; a=3;c=;=x; noequals; d=e=f')
    expect({ ...cookies }).toEqual({ a: '1', b: 'two', c: '', d: 'e=f' })
    // A last part without `=` is no cookie.
    expect({ ...parseCookieHeader('a=1; flag') }).toEqual({ a: '1' })
  })

  it('decodes percent-encoded values that decode cleanly and keeps the others as sent', () => {
    expect({ ...parseCookieHeader('a=x%7Cy; b=%E0%A4%A; c=plain') }).toEqual({ a: 'x|y', b: '%E0%A4%A', c: 'plain' })
  })

  it('gives an empty record for no header, and treats __proto__ as an ordinary name', () => {
    expect({ ...parseCookieHeader(null) }).toEqual({})
    expect({ ...parseCookieHeader('') }).toEqual({})
    const cookies = parseCookieHeader('__proto__=x; constructor=y')
    expect(cookies.__proto__).toBe('x')
    expect(cookies.constructor).toBe('y')
    expect(Object.getPrototypeOf(cookies)).toBeNull()
  })
})

describe('chunked session cookies', () => {
  const option = defaultCookies(true).sessionToken
  const NAME = option.name

  it('writes a value up to the chunk size as one cookie, HttpOnly, with the expiry', () => {
    const value = 'x'.repeat(SESSION_CHUNK_SIZE)
    expect(writeChunkedCookie(option, value, EXPIRES, [])).toEqual([{ name: NAME, value, options: { ...option.options, expires: EXPIRES } }])
    expect(SESSION_CHUNK_SIZE).toBe(3936)
  })

  it('splits a longer value into numbered chunks and deletes the unchunked cookie it replaces', () => {
    const value = `${'a'.repeat(SESSION_CHUNK_SIZE)}${'b'.repeat(SESSION_CHUNK_SIZE)}c`
    const written = writeChunkedCookie(option, value, EXPIRES, [NAME])
    expect(written.map((c) => [c.name, c.value.length, c.options.maxAge, c.options.expires])).toEqual([
      [NAME, 0, 0, undefined],
      [`${NAME}.0`, SESSION_CHUNK_SIZE, undefined, EXPIRES],
      [`${NAME}.1`, SESSION_CHUNK_SIZE, undefined, EXPIRES],
      [`${NAME}.2`, 1, undefined, EXPIRES],
    ])
    expect(written.slice(1).map((c) => c.value).join('')).toBe(value)
    for (const cookie of written) expect(cookie.options.httpOnly).toBe(true)
  })

  it('deletes the chunks a shorter value no longer needs, and writes an empty value as one cookie', () => {
    const written = writeChunkedCookie(option, 'short', EXPIRES, [`${NAME}.0`, `${NAME}.1`])
    expect(written.map((c) => [c.name, c.value, c.options.maxAge])).toEqual([
      [`${NAME}.0`, '', 0],
      [`${NAME}.1`, '', 0],
      [NAME, 'short', undefined],
    ])
    expect(writeChunkedCookie(option, '', EXPIRES, []).map((c) => c.name)).toEqual([NAME])
  })

  it('reads chunks in index order, only under exact chunk names', () => {
    const cookies = parseCookieHeader(
      `${NAME}.1=b; ${NAME}.0=a; ${NAME}.10=k; ${NAME}.2=c; ${NAME}x=no; ${NAME}.01=no; ${NAME}.16=no; ${NAME}.-1=no; ${NAME}.=no; ${NAME}_1=no; ${NAME}.1a=no`,
    )
    expect(readChunkedCookie(cookies, NAME)).toEqual({ value: 'abck', names: [`${NAME}.0`, `${NAME}.1`, `${NAME}.2`, `${NAME}.10`] })
  })

  it('reads the unchunked cookie before the chunks when both are sent', () => {
    const cookies = parseCookieHeader(`${NAME}.1=c; ${NAME}=a; ${NAME}.0=b`)
    expect(readChunkedCookie(cookies, NAME)).toEqual({ value: 'abc', names: [NAME, `${NAME}.0`, `${NAME}.1`] })
  })

  it('ignores a cookie of the same length with a chunk suffix but another name', () => {
    const cookies = parseCookieHeader(`${'x'.repeat(NAME.length)}.0=evil; ${NAME}.1=b; ${NAME}.0=a`)
    expect(readChunkedCookie(cookies, NAME)).toEqual({ value: 'ab', names: [`${NAME}.0`, `${NAME}.1`] })
  })

  it('reads an unchunked cookie, ignores empty ones, and reads nothing when there is none', () => {
    expect(readChunkedCookie(parseCookieHeader(`${NAME}=whole`), NAME)).toEqual({ value: 'whole', names: [NAME] })
    expect(readChunkedCookie(parseCookieHeader(`${NAME}=; other=1`), NAME)).toEqual({ value: '', names: [] })
    expect(readChunkedCookie(parseCookieHeader('other=1'), NAME)).toEqual({ value: '', names: [] })
  })

  it('reads the highest chunk index it could write (15), and none beyond', () => {
    expect(MAX_SESSION_CHUNKS).toBe(16)
    const cookies = parseCookieHeader(`${NAME}.15=p; ${NAME}.9=n; ${NAME}.16=no; ${NAME}.99=no`)
    expect(readChunkedCookie(cookies, NAME)).toEqual({ value: 'np', names: [`${NAME}.9`, `${NAME}.15`] })
  })

  it('stops reading at MAX_CHUNKED_VALUE characters', () => {
    expect(MAX_CHUNKED_VALUE).toBe(16 * 4096)
    const chunk = 'x'.repeat(4096)
    const header = Array.from({ length: 16 }, (_, i) => `${NAME}.${i}=${chunk}`).join('; ')
    const full = readChunkedCookie(parseCookieHeader(header), NAME)
    expect(full.value.length).toBe(MAX_CHUNKED_VALUE)
    expect(full.names.length).toBe(16)
    const over = readChunkedCookie(parseCookieHeader(`${header.replace(`${NAME}.15=${chunk}`, `${NAME}.15=${chunk}y`)}`), NAME)
    expect(over.names.length).toBe(15)
    expect(over.value.length).toBe(15 * 4096)
  })

  it('holds one unchunked cookie to MAX_CHUNKED_VALUE characters too (getToken reads headers of any size)', () => {
    const whole = 'x'.repeat(MAX_CHUNKED_VALUE)
    expect(readChunkedCookie(parseCookieHeader(`${NAME}=${whole}`), NAME)).toEqual({ value: whole, names: [NAME] })
    expect(readChunkedCookie(parseCookieHeader(`${NAME}=${whole}y`), NAME)).toEqual({ value: '', names: [] })
    expect(readChunkedCookie(parseCookieHeader(`${NAME}.3=${whole}y`), NAME)).toEqual({ value: '', names: [] })
  })

  it('clears every chunk it read, keeping the attributes', () => {
    expect(clearChunkedCookie(option, [`${NAME}.0`, `${NAME}.1`])).toEqual([
      { name: `${NAME}.0`, value: '', options: { ...option.options, maxAge: 0 } },
      { name: `${NAME}.1`, value: '', options: { ...option.options, maxAge: 0 } },
    ])
    expect(expiredCookie(option)).toEqual({ name: NAME, value: '', options: { ...option.options, maxAge: 0 } })
  })
})
