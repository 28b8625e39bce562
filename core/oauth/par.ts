/**
 * Pushed Authorization Requests (RFC 9126), per provider (`par: true`): the authorization request's
 * parameters go to the provider's `pushed_authorization_request_endpoint` over the back channel,
 * with the client's authentication, and the browser is sent to the authorization endpoint with only
 * `client_id` and the `request_uri` the provider answered. The parameters (PKCE challenge, nonce,
 * redirect URI, scopes) then never pass through the browser, where they could be read or altered.
 *
 * @module
 * @see https://www.rfc-editor.org/rfc/rfc9126
 */
import * as oauth from 'oauth4webapi'
import type { ResolvedOAuthProvider } from './provider.js'
import { clientAuthentication, clientOf, requestOptions } from './server.js'

/**
 * Pushes the authorization request `authorizationUrl` (the authorization endpoint with every
 * parameter in its query) and returns the URL to send the browser to instead.
 *
 * @throws {TypeError} when the provider advertises no PAR endpoint; oauth4webapi's errors when the
 *   provider refuses the request or answers nonsense.
 */
export async function pushAuthorizationRequest(
  provider: ResolvedOAuthProvider,
  as: oauth.AuthorizationServer,
  authorizationUrl: URL,
): Promise<URL> {
  const endpoint = as.pushed_authorization_request_endpoint
  if (!endpoint) throw new TypeError(`provider "${provider.id}" has \`par: true\` but advertises no pushed_authorization_request_endpoint`)
  const client = clientOf(provider)
  const response = await oauth.pushedAuthorizationRequest(
    as,
    client,
    clientAuthentication(provider, as),
    new URLSearchParams(authorizationUrl.searchParams),
    requestOptions(provider, endpoint),
  )
  const { request_uri } = await oauth.processPushedAuthorizationResponse(as, client, response)
  const redirect = new URL(as.authorization_endpoint!)
  redirect.search = ''
  redirect.searchParams.set('client_id', provider.clientId)
  redirect.searchParams.set('request_uri', request_uri)
  return redirect
}
