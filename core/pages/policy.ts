/**
 * The Content Security Policy of the built-in pages. A page that asks for a password or approves
 * a sensitive action must not be framed by another site (clickjacking), and must run no script but
 * our own: every page is sent with `frame-ancestors 'none'` (and `X-Frame-Options: DENY` for older
 * browsers) and a `script-src` that lists the SHA-256 hash of each inline script we ship, and
 * nothing else, so an injected `<script>` or event handler does not run.
 *
 * A script is allowed by declaring it once, at module load, with {@link inlineScript} (which
 * hashes it then, never per request). A script's text is therefore a constant: what varies per
 * page (a URL, a provider id) goes into the markup (a data attribute or a `type="application/json"`
 * block, which the browser never runs), never into the script.
 *
 * Styles are allowed inline (`style-src 'self' 'unsafe-inline'`): provider buttons carry their
 * brand colour in a `style` attribute, which a hash cannot allow in every browser; CSS cannot run
 * script, and the frame and script rules are what stop clickjacking and injected code.
 *
 * @module
 */

/** Every inline script declared so far, in the order declared. */
const scripts = new Set<string>()
/** Their hash sources, computed at the first page (hashing at module load cost every start). */
let scriptSources: Set<string> | undefined
/** The policy for the current {@link scripts}, rebuilt when a script is declared. */
let policyOfScripts: string | undefined

/**
 * Declares `source` as one of our inline scripts: its hash joins the policy of every page. Call it
 * at module load, with a constant.
 *
 * @returns `source` itself, to write into a `<script>` element unchanged.
 */
export function inlineScript(source: string): string {
  scripts.add(source)
  scriptSources = undefined
  policyOfScripts = undefined
  return source
}

/** The hash sources of the declared scripts. */
function declaredSources(): Set<string> {
  scriptSources ??= new Set([...scripts].map((source) => `'sha256-${sha256Base64(source)}'`))
  return scriptSources
}

/** The parts of the policy every page shares; `frame-ancestors` is added per page. */
function sharedPolicy(): string {
  if (policyOfScripts === undefined) {
    const sources = declaredSources()
    policyOfScripts = `script-src ${sources.size > 0 ? [...sources].join(' ') : "'none'"}; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'`
  }
  return policyOfScripts
}

/** `frame-ancestors 'none'`: no site may frame the page. */
export const NO_FRAMING = "'none'"

/**
 * The `Content-Security-Policy` of a built-in page: our inline scripts by hash, and the sites
 * allowed to frame it (`'none'` by default; a list of origins for the front-channel logout page,
 * which the provider frames).
 */
export function pagePolicy(frameAncestors: readonly string[] | typeof NO_FRAMING = NO_FRAMING): string {
  const ancestors = typeof frameAncestors === 'string' ? frameAncestors : frameAncestors.length > 0 ? frameAncestors.join(' ') : NO_FRAMING
  return `${sharedPolicy()}; frame-ancestors ${ancestors}`
}

/**
 * The hashes of every inline script in `html` that {@link inlineScript} did not declare: empty for
 * a page whose scripts all run under {@link pagePolicy}. For tests and load-time checks; never per
 * request.
 */
export function undeclaredScripts(html: string): string[] {
  const undeclared: string[] = []
  for (const match of html.matchAll(/<script(\s[^>]*)?>([\s\S]*?)<\/script>/g)) {
    const attributes = match[1] ?? ''
    if (/\stype="application\/json"/.test(attributes)) continue
    const hash = `'sha256-${sha256Base64(match[2]!)}'`
    if (!declaredSources().has(hash)) undeclared.push(hash)
  }
  return undeclared
}

// SHA-256 (FIPS 180-4), synchronous: the hashes are needed while a page is written, where Web Crypto's
// `digest` (a promise) cannot be awaited on every runtime.
const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
])

const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n))

/** The SHA-256 digest of `bytes`. */
export function sha256(bytes: Uint8Array): Uint8Array {
  const length = bytes.length
  const padded = new Uint8Array(((length + 9 + 63) >>> 6) << 6)
  padded.set(bytes)
  padded[length] = 0x80
  const view = new DataView(padded.buffer)
  view.setUint32(padded.length - 8, Math.floor(length / 0x20000000))
  view.setUint32(padded.length - 4, (length << 3) >>> 0)
  const h = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19])
  const w = new Uint32Array(64)
  for (let offset = 0; offset < padded.length; offset += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(offset + i * 4)
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15]!
      const b = w[i - 2]!
      const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3)
      const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10)
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0
    }
    let a = h[0]!, b = h[1]!, c = h[2]!, d = h[3]!, e = h[4]!, f = h[5]!, g = h[6]!, k = h[7]!
    for (let i = 0; i < 64; i++) {
      const t1 = (k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0
      k = g
      g = f
      f = e
      e = (d + t1) | 0
      d = c
      c = b
      b = a
      a = (t1 + t2) | 0
    }
    h[0] = h[0]! + a
    h[1] = h[1]! + b
    h[2] = h[2]! + c
    h[3] = h[3]! + d
    h[4] = h[4]! + e
    h[5] = h[5]! + f
    h[6] = h[6]! + g
    h[7] = h[7]! + k
  }
  const out = new Uint8Array(32)
  const outView = new DataView(out.buffer)
  for (let i = 0; i < 8; i++) outView.setUint32(i * 4, h[i]!)
  return out
}

/** The base64 SHA-256 of `text`'s UTF-8 bytes, as a CSP hash source writes it. */
export function sha256Base64(text: string): string {
  let binary = ''
  for (const byte of sha256(new TextEncoder().encode(text))) binary += String.fromCharCode(byte)
  return btoa(binary)
}
