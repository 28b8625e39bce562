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

/** Renders attributes from a record, skipping unsafe names and non-scalar values. */
export function attributes(record: Record<string, unknown>, skip: ReadonlySet<string>): string {
  let out = ''
  for (const [name, value] of Object.entries(record)) {
    if (skip.has(name) || !/^[a-zA-Z][a-zA-Z0-9-]*$/.test(name) || /^on/i.test(name)) continue
    if (value === true) out += ` ${name}`
    else if (typeof value === 'string' || typeof value === 'number') {
      out += ` ${name}="${escapeHtml(value)}"`
    }
  }
  return out
}
