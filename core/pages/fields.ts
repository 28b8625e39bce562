/**
 * What the forms of one sign-in page share: its element ids (each unique on the page), its field
 * labels (distinct, so a label names one field) and its focus (the page's first field only).
 * Auth.js's ids and labels are kept wherever they are already unique.
 *
 * @module
 */
import type { SignInFormField, SignInPageFields } from '../config/types.js'
import { escapeHtml } from './html.js'

/** A field of a form provider, as the sign-in page labels it. */
export interface LabelledField extends SignInFormField {
  providerId: string
  providerName: string
}

const labelKey = (providerId: string, field: string) => `${providerId}\u0000${field}`

/**
 * The label each field shows. Where two fields would read the same (the e-mail provider's "Email"
 * and the passkey form's "Email"), every one but the first that keeps its label (the e-mail
 * provider's, `keepsLabel`) names its provider: "Email (Passkey)".
 */
export function distinctLabels(fields: readonly LabelledField[]): Map<string, string> {
  const counts = new Map<string, number>()
  for (const { label } of fields) counts.set(label.toLowerCase(), (counts.get(label.toLowerCase()) ?? 0) + 1)
  const kept = new Set<string>()
  const labels = new Map<string, string>()
  for (const f of fields) {
    const text = f.label.toLowerCase()
    const unique = counts.get(text) === 1
    const keepsPlainLabel = unique || (f.keepsLabel === true && !kept.has(text))
    if (keepsPlainLabel) kept.add(text)
    labels.set(labelKey(f.providerId, f.field), keepsPlainLabel ? f.label : `${f.label} (${f.providerName})`)
  }
  return labels
}

/** Input types that take no typing: they never receive the page's first focus. */
const UNFOCUSABLE_TYPES = new Set(['hidden', 'submit', 'button', 'reset', 'image', 'checkbox', 'radio', 'file'])

/** The bookkeeping of one sign-in page's forms. */
export class PageFields implements SignInPageFields {
  private readonly ids = new Set<string>()
  private focused = false

  constructor(private readonly labels: ReadonlyMap<string, string> = new Map()) {}

  /** `preferred` (Auth.js's id) unless the page already has an element with it; `fallback` then. */
  id(preferred: string, fallback: string): string {
    const id = this.ids.has(preferred) ? fallback : preferred
    this.ids.add(id)
    return id
  }

  /** ` autofocus` for the first field of the page that takes typing; nothing after. */
  autofocus(type: string): string {
    if (this.focused || UNFOCUSABLE_TYPES.has(type.toLowerCase())) return ''
    this.focused = true
    return ' autofocus'
  }

  /** The label of `field` of provider `providerId` (see {@link distinctLabels}). */
  label(providerId: string, field: string, label: string): string {
    return this.labels.get(labelKey(providerId, field)) ?? label
  }
}

/** The label of a passkey form field on its own: its `label`, else its key (as Auth.js). */
export function passkeyFieldLabel(key: string, input: Record<string, unknown>): string {
  return typeof input.label === 'string' ? input.label : key
}

/** The id of a form's submit button: Auth.js's `submitButton` while it is unique on the page. */
export function submitButtonId(providerId: string, fields: SignInPageFields): string {
  return escapeHtml(fields.id('submitButton', `submitButton-${providerId}`))
}
