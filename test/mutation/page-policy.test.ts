/**
 * The page policy's module at its edges: the synchronous SHA-256 against Node's for every padding
 * length, the policy of a module that has declared no script yet, each declared script's hash in
 * the order declared (and a policy rebuilt when one is added), and the scripts a page carries that
 * no declaration covers. The module is imported afresh where its load-time state matters.
 */
import { createHash } from 'node:crypto'
import { describe, expect, it, vi } from 'vitest'

type PolicyModule = typeof import('../../core/pages/policy.js')

/** The module as it is when nothing has declared a script yet. */
async function freshPolicy(): Promise<PolicyModule> {
  vi.resetModules()
  return import('../../core/pages/policy.js')
}

const nodeSha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest()
const hashSource = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`

describe('the synchronous SHA-256', () => {
  it('agrees with Node’s for every length across three blocks, and for long and multi-byte input', async () => {
    const { sha256, sha256Base64 } = await freshPolicy()
    for (let length = 0; length <= 200; length++) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 31 + length * 7 + 1) & 0xff)
      expect(Buffer.from(sha256(bytes)).toString('hex'), `length ${length}`).toBe(nodeSha256(bytes).toString('hex'))
    }
    const long = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 131) & 0xff)
    expect(Buffer.from(sha256(long)).toString('hex')).toBe(nodeSha256(long).toString('hex'))
    for (const text of ['é€𝄞', '\u0000\uffff', 'abc']) expect(sha256Base64(text)).toBe(nodeSha256(Buffer.from(text, 'utf8')).toString('base64'))
  })

  it('gives the standard test vectors', async () => {
    const { sha256 } = await freshPolicy()
    const hex = (text: string) => Buffer.from(sha256(new TextEncoder().encode(text))).toString('hex')
    expect(hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
    expect(hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    expect(hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe('248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1')
  })
})

describe('the policy', () => {
  it('runs no script at all while none is declared', async () => {
    const { pagePolicy } = await freshPolicy()
    expect(pagePolicy()).toBe("script-src 'none'; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'")
  })

  it('lists each declared script once, in the order declared, and is rebuilt when one is added', async () => {
    const { inlineScript, pagePolicy } = await freshPolicy()
    expect(inlineScript('first()')).toBe('first()')
    expect(pagePolicy()).toBe(`script-src ${hashSource('first()')}; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'`)
    inlineScript('second()')
    inlineScript('first()')
    expect(pagePolicy()).toBe(
      `script-src ${hashSource('first()')} ${hashSource('second()')}; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'`,
    )
  })

  it('lets the origins listed frame a page, each once, and no one for an empty list or by default', async () => {
    const { pagePolicy, NO_FRAMING } = await freshPolicy()
    expect(NO_FRAMING).toBe("'none'")
    expect(pagePolicy(['https://a.example', 'https://b.example']).endsWith('; frame-ancestors https://a.example https://b.example')).toBe(true)
    expect(pagePolicy([]).endsWith("; frame-ancestors 'none'")).toBe(true)
    expect(pagePolicy(NO_FRAMING).endsWith("; frame-ancestors 'none'")).toBe(true)
  })
})

describe('undeclared scripts', () => {
  it('finds scripts with attributes and over several lines, and skips only JSON data blocks', async () => {
    const { inlineScript, undeclaredScripts } = await freshPolicy()
    inlineScript('declared()')
    const page = [
      '<script>declared()</script>',
      '<script defer>one()</script>',
      '<script>\ntwo()\n</script>',
      '<script id="data" type="application/json">{"a":1}</script>',
      '<script data-type="application/json">{"b":2}</script>',
      '<script xtype="application/json">three()</script>',
      '<script type="module">four()</script>',
    ].join('\n')
    expect(undeclaredScripts(page)).toEqual(['one()', '\ntwo()\n', '{"b":2}', 'three()', 'four()'].map(hashSource))
    expect(undeclaredScripts('<p>no script</p>')).toEqual([])
  })
})

describe('the front-channel logout page', () => {
  it('may be framed by the OpenID providers’ issuer origins only, and says whether a session ended', async () => {
    const { respondFrontChannelPage } = await import('../../core/flows/logout/flow.js')
    const providers = [
      { id: 'op', type: 'oidc', oauth: { issuer: 'https://op.example/realms/main' } },
      { id: 'op-again', type: 'oidc', oauth: { issuer: 'https://op.example/realms/other' } },
      { id: 'plain', type: 'oauth', oauth: { issuer: 'https://plain-oauth.example' } },
      { id: 'broken', type: 'oidc', oauth: { issuer: 'not a url' } },
      { id: 'no-issuer', type: 'oidc', oauth: {} },
      { id: 'credentials', type: 'credentials' },
    ]
    const ctx = { config: { providers, theme: {} }, setCookies: [] } as never
    const ended = respondFrontChannelPage(ctx, { ended: true })
    const headers = ended.headers as Record<string, string>
    expect(headers['Content-Security-Policy']!.endsWith('; frame-ancestors https://op.example')).toBe(true)
    expect(String(ended.body)).toContain('<title>Sign out')
    expect(String(ended.body)).toContain('<p>You are signed out.</p>')
    const none = respondFrontChannelPage(ctx, { ended: 'yes' }, 400)
    expect(none.status).toBe(400)
    expect(String(none.body)).toContain('<p>There was no session to end here.</p>')
  })
})
