/**
 * What the differential suite compares between @auth/core and authchart: a response reduced to
 * what an application, a browser or a test can observe, with only truly random parts abstracted
 * (CSRF tokens, PKCE verifiers, UUIDs) and everything else exact: status, `Location`, the JSON
 * body, every `Set-Cookie` with its attributes (`HttpOnly`, `Secure`, `SameSite`, `Path`,
 * `Max-Age`, `Expires` to the second), the claims inside a session JWT, and the structure of HTML
 * pages (forms with their action, method, inputs and buttons; headings, paragraphs and links).
 * Time is frozen by the suite, so expiries compare exactly.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import { decode as authjsDecode } from '@auth/core/jwt'

/** One `Set-Cookie`, normalised. */
export interface ObservedCookie {
  name: string
  value: string
  attributes: Record<string, string | true>
}

/** A response as the suite compares it. */
export interface Observation {
  status: number
  location: string | null
  body: unknown
  cookies: ObservedCookie[]
}

const HEX64 = /[0-9a-f]{64}/g
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g

/** Abstracts the random parts of a string: 64-hex tokens and UUIDs. */
export function abstractRandom(text: string): string {
  return text.replace(HEX64, '<hex64>').replace(UUID, '<uuid>')
}

function abstractJson(value: unknown): unknown {
  if (typeof value === 'string') return abstractRandom(value)
  if (Array.isArray(value)) return value.map(abstractJson)
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, abstractJson(v)]))
  }
  return value
}

/** Authorization-request parameters that are random per request. */
const RANDOM_PARAMS = new Set(['state', 'nonce', 'code_challenge', 'code', 'session_state'])

/** A Location with its random query parameters abstracted. */
export function abstractLocation(location: string | null): string | null {
  if (location === null) return null
  let url: URL
  try {
    url = new URL(location)
  } catch {
    return location
  }
  for (const key of [...url.searchParams.keys()]) {
    if (RANDOM_PARAMS.has(key)) url.searchParams.set(key, '<random>')
  }
  url.searchParams.sort()
  return url.href
}

/** Secrets the suite knows, to check CSRF hashes and open session JWTs. */
export interface Keys {
  secret: string
}

async function cookieValue(name: string, raw: string, keys: Keys): Promise<string> {
  const value = decodeURIComponent(raw)
  if (value === '') return ''
  const csrf = /^([0-9a-f]{64})\|([0-9a-f]{64})$/.exec(value)
  if (csrf) {
    const expected = createHash('sha256').update(`${csrf[1]}${keys.secret}`).digest('hex')
    return csrf[2] === expected ? '<csrf token|valid hash>' : '<csrf token|INVALID hash>'
  }
  if (/session-token/.test(name) && value.split('.').length === 5) {
    const claims = await authjsDecode({ token: value, secret: keys.secret, salt: name }).catch(() => null)
    if (!claims) return '<session JWT that @auth/core cannot open>'
    const { jti, ...rest } = claims as Record<string, unknown>
    return `<session JWT ${JSON.stringify(abstractJson({ ...rest, jti: typeof jti }))}>`
  }
  if (/^[0-9a-f-]{36}$/.test(value)) return '<uuid>'
  if (/^[\w-]+\.[\w-]*\.[\w-]+\.[\w-]+\.[\w-]+$/.test(value)) return '<sealed>'
  if (/^[\w-]{40,}$/.test(value)) return '<random>'
  return abstractRandom(value)
}

/** Parses and normalises the `Set-Cookie` headers of a response, sorted by name. */
export async function observeCookies(response: Response, keys: Keys): Promise<ObservedCookie[]> {
  const cookies: ObservedCookie[] = []
  for (const header of response.headers.getSetCookie()) {
    const [pair, ...rest] = header.split(/;\s*/)
    const eq = pair!.indexOf('=')
    const name = pair!.slice(0, eq)
    const attributes: Record<string, string | true> = {}
    for (const attribute of rest) {
      const i = attribute.indexOf('=')
      const key = (i === -1 ? attribute : attribute.slice(0, i)).toLowerCase()
      attributes[key] = i === -1 ? true : key === 'samesite' ? attribute.slice(i + 1).toLowerCase() : attribute.slice(i + 1)
    }
    cookies.push({ name, value: await cookieValue(name, pair!.slice(eq + 1), keys), attributes })
  }
  return cookies.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

const CAPTURE_TEXT = new Set(['title', 'h1', 'p', 'label', 'button', 'a'])
const IGNORE_TEXT = new Set(['style', 'script'])
const KEPT_ATTRIBUTES: Record<string, string[]> = {
  form: ['action', 'method'],
  input: ['type', 'name', 'id', 'value', 'required', 'autofocus'],
  label: ['for'],
  button: ['type', 'id'],
  a: ['href'],
}

/**
 * The outline of an HTML page: title, headings, paragraphs, links, and every form with its action,
 * method, inputs (type, name, id, value) and buttons, in document order. Styling, wrappers and
 * images are left out: the pages are meant to work the same, not to look the same.
 */
export function outline(html: string): string[] {
  const lines: string[] = []
  const open: { tag: string; head: string; text: string }[] = []
  let ignoring: string | undefined
  for (const match of html.matchAll(/<(\/?)([a-zA-Z0-9]+)([^>]*?)(\/?)>|([^<]+)/g)) {
    const [, closing, rawTag, attrs, , text] = match
    if (text !== undefined) {
      if (!ignoring) for (const element of open) element.text += text
      continue
    }
    const tag = rawTag!.toLowerCase()
    if (IGNORE_TEXT.has(tag)) {
      ignoring = closing ? undefined : tag
      continue
    }
    if (closing) {
      const index = open.map((e) => e.tag).lastIndexOf(tag)
      if (index !== -1) {
        const [element] = open.splice(index, 1)
        lines.push(`${element!.head} "${element!.text.replace(/\s+/g, ' ').trim()}"`)
      }
      if (tag === 'form') lines.push('/form')
      continue
    }
    const kept = KEPT_ATTRIBUTES[tag]
    if (!kept && !CAPTURE_TEXT.has(tag)) continue
    const attributes: string[] = []
    for (const [, key, , value] of attrs!.matchAll(/([a-zA-Z-]+)(=("([^"]*)"|'([^']*)'|[^\s"'>]+))?/g)) {
      const name = key!.toLowerCase()
      if (!kept?.includes(name)) continue
      attributes.push(`${name}=${abstractRandom(decodeEntities(value?.replace(/^["']|["']$/g, '') ?? ''))}`)
    }
    const head = [tag, ...attributes.sort()].join(' ')
    if (CAPTURE_TEXT.has(tag)) open.push({ tag, head, text: '' })
    else lines.push(head)
  }
  return lines
}

function decodeEntities(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
}

/** Reduces a response to its {@link Observation}. */
export async function observe(response: Response, keys: Keys): Promise<Observation> {
  const type = response.headers.get('content-type') ?? ''
  let body: unknown = null
  if (type.startsWith('application/json')) body = abstractJson(await response.json())
  else if (type.startsWith('text/html')) body = outline(await response.text())
  return {
    status: response.status,
    location: abstractLocation(response.headers.get('location')),
    body,
    cookies: await observeCookies(response, keys),
  }
}
