/**
 * `client_secret_basic` byte for byte: the same OAuth sign-in against @auth/core and authchart,
 * each with a `customFetch` standing in for the provider, must send the same `Authorization`
 * header to the token endpoint, whatever characters the client id and secret hold.
 */
import { Auth as AuthjsAuth, customFetch as authjsCustomFetch } from '@auth/core'
import * as oauth from 'oauth4webapi'
import { describe, expect, it } from 'vitest'
import { Auth, customFetch } from '../../core/index.js'
import { CookieJar, ORIGIN, SECRET, spyLogger } from '../fixtures/http.js'

type AnyAuth = (request: Request, config: never) => Promise<Response>

const libraries = [
  { name: '@auth/core', Auth: AuthjsAuth as unknown as AnyAuth, customFetch: authjsCustomFetch as symbol },
  { name: 'authchart', Auth: Auth as unknown as AnyAuth, customFetch: customFetch as symbol },
] as const

const PROVIDER = 'https://acme.example'

/** Runs a sign-in up to the token request; returns that request's Authorization header. */
async function tokenAuthorization(
  lib: (typeof libraries)[number],
  clientId: string,
  clientSecret: string,
): Promise<string | null> {
  let authorization: string | null | undefined
  const providerFetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : input)
    if (url.href === `${PROVIDER}/token`) {
      authorization = new Headers(init?.headers).get('authorization')
      return Response.json({ access_token: 'at', token_type: 'bearer' })
    }
    if (url.href === `${PROVIDER}/me`) return Response.json({ id: '1', name: 'A' })
    return new Response('not found', { status: 404 })
  }
  const config = {
    secret: SECRET,
    trustHost: true,
    logger: spyLogger(),
    providers: [
      {
        id: 'acme',
        name: 'Acme',
        type: 'oauth',
        authorization: `${PROVIDER}/authorize`,
        token: `${PROVIDER}/token`,
        userinfo: `${PROVIDER}/me`,
        clientId,
        clientSecret,
        [lib.customFetch]: providerFetch,
      },
    ],
  } as never
  const jar = new CookieJar()
  const send = async (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers)
    headers.set('cookie', jar.header())
    const response = await lib.Auth(new Request(`${ORIGIN}${path}`, { ...init, headers }), config)
    jar.store(response.clone())
    return response
  }
  const { csrfToken } = (await (await send('/auth/csrf')).json()) as { csrfToken: string }
  const start = await send('/auth/signin/acme', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrfToken }).toString(),
  })
  expect(new URL(start.headers.get('location')!).origin, `${lib.name} redirects to the provider`).toBe(PROVIDER)
  await send('/auth/callback/acme?code=the-code')
  expect(authorization, `${lib.name} sent a token request`).not.toBeUndefined()
  return authorization ?? null
}

/** Client ids and secrets with every character the two encodings treat differently. */
const credentials: [string, string][] = [
  ['1234-abcd.apps.googleusercontent.com', 'GOCSPX-secret_value'],
  ['client-id', 'client-secret'],
  ['under_score.dot~tilde', "bang!star*quote'paren()"],
  ['with space', 'secret with  spaces'],
  ['colon:in:id', 'colon:in:secret'],
  ['ünïcødé-客户', 'sécret-密钥'],
  ['plus+slash/percent%', 'amp&eq=question?hash#'],
]

describe('client_secret_basic', () => {
  it.each(credentials)('sends @auth/core\'s Authorization header for id %j and secret %j', async (id, secret) => {
    const [theirs, ours] = await Promise.all(libraries.map((lib) => tokenAuthorization(lib, id, secret)))
    expect(theirs).toMatch(/^Basic /)
    expect(ours).toBe(theirs)
  })

  it('differs from oauth4webapi\'s default encoding for ids with "-" (so the test above can fail)', async () => {
    const headers = new Headers()
    const client = { client_id: 'client-id' }
    await oauth.ClientSecretBasic('client-secret')({ issuer: PROVIDER }, client, new URLSearchParams(), headers)
    const ours = await tokenAuthorization(libraries[1], 'client-id', 'client-secret')
    expect(headers.get('authorization')).toBe(`Basic ${btoa('client%2Did:client%2Dsecret')}`)
    expect(ours).toBe(`Basic ${btoa('client-id:client-secret')}`)
  })
})
