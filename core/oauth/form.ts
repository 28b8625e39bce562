/**
 * The form body of an OAuth endpoint of ours (the token endpoint, device authorization): read no
 * further than a bound, whatever Content-Length says, and refused when a parameter repeats.
 *
 * @module
 */
import { webRequestSource } from '../http/request.js'

/**
 * The form body's parameters; `undefined` for another content type, a body past `maxBytes`
 * (declared or read), bytes that are not UTF-8, or a repeated parameter.
 */
export async function oauthFormOf(request: Request, maxBytes: number): Promise<Map<string, string> | undefined> {
  const type = request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase()
  if (type !== 'application/x-www-form-urlencoded') return undefined
  const length = Number(request.headers.get('content-length') ?? '0')
  if (!Number.isFinite(length) || length > maxBytes) return undefined
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(await webRequestSource(request).bytes(maxBytes))
  } catch {
    return undefined
  }
  const params = new Map<string, string>()
  for (const [name, value] of new URLSearchParams(text)) {
    // RFC 6749 (section 3.2): a parameter sent twice is an invalid request, never "the first one wins".
    if (params.has(name)) return undefined
    params.set(name, value)
  }
  return params
}
