/**
 * Escaping for the built-in pages: every dynamic value passes through one of these on its way into
 * HTML, which is the XSS boundary of the pages.
 *
 * @module
 */

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

/** Escapes text for an HTML element body or a quoted attribute value. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ENTITIES[c]!)
}

/**
 * Keeps only characters that can appear in a CSS colour, so a value written into a `<style>`
 * element or a `style` attribute can neither close it nor inject declarations.
 */
export function cssValue(value: string): string {
  return value.replace(/[^#a-zA-Z0-9(),.%\s-]/g, '')
}

/**
 * Attributes whose value the browser fetches, navigates to or submits to. A config-driven value
 * here must not be a `javascript:` (or `data:`, `vbscript:`…) URL: `formaction` on an input runs
 * it when the form is submitted.
 */
const URL_ATTRIBUTES = new Set([
  'action',
  'archive',
  'background',
  'cite',
  'classid',
  'codebase',
  'data',
  'dynsrc',
  'formaction',
  'href',
  'icon',
  'itemtype',
  'longdesc',
  'lowsrc',
  'manifest',
  'ping',
  'poster',
  'profile',
  'src',
  'srcset',
  'usemap',
  'xmlns',
])
/** Attributes that hold markup rather than a value: never taken from config. */
const MARKUP_ATTRIBUTES = new Set(['srcdoc'])
const SAFE_SCHEMES = new Set(['http', 'https', 'mailto'])

/**
 * Whether `url` is relative or uses a safe scheme (http, https, mailto), as a browser would read
 * it: leading and trailing controls and spaces, and tabs and newlines anywhere, are dropped
 * before the scheme is parsed (so `java\tscript:` is `javascript:`).
 */
export function isSafeUrl(url: string): boolean {
  const normalized = url.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '').replace(/[\t\n\r]/g, '')
  const scheme = /^([^:/?#]*):/.exec(normalized)?.[1]
  return scheme === undefined || SAFE_SCHEMES.has(scheme.toLowerCase())
}

/** Whether every URL of a `srcset` list (`url [descriptor], …`) is safe. */
function isSafeSrcset(value: string): boolean {
  return value.split(',').every((candidate) => isSafeUrl(candidate.trim().split(/\s+/)[0] ?? ''))
}

/** Whether an image source is safe: a safe URL, or an inline raster or SVG image. */
export function isSafeImageUrl(url: string): boolean {
  return isSafeUrl(url) || /^data:image\/(png|gif|jpeg|webp|avif|svg\+xml)[;,]/i.test(url.trim())
}

/**
 * Renders attributes from a record, skipping unsafe names (event handlers, markup holders),
 * URL-bearing attributes whose value is not a safe URL, and non-scalar values.
 */
export function attributes(record: Record<string, unknown>, skip: ReadonlySet<string>): string {
  let out = ''
  for (const [name, value] of Object.entries(record)) {
    const lower = name.toLowerCase()
    if (skip.has(name) || !/^[a-zA-Z][a-zA-Z0-9-]*$/.test(name) || lower.startsWith('on')) continue
    if (MARKUP_ATTRIBUTES.has(lower)) continue
    if (URL_ATTRIBUTES.has(lower)) {
      const url = String(value)
      if (typeof value !== 'string' || !(lower === 'srcset' ? isSafeSrcset(url) : isSafeUrl(url))) continue
    }
    if (value === true) out += ` ${name}`
    else if (typeof value === 'string' || typeof value === 'number') {
      out += ` ${name}="${escapeHtml(value)}"`
    }
  }
  return out
}

/** The hidden CSRF token field of a form. */
export function hiddenCsrf(csrfToken: string): string {
  return `<input type="hidden" name="csrfToken" value="${escapeHtml(csrfToken)}">`
}
