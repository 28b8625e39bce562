/**
 * The sessions page: a signed-in user's sessions (which browser, when signed in, when last seen),
 * with a button to sign out of each other one, of every other one, or everywhere. Every button is
 * a CSRF-checked form posting to `{basePath}/sessions`; nothing needs a script.
 *
 * @module
 */
import type { SessionInfo } from '../session/manage.js'
import { escapeHtml } from './html.js'
import { hiddenCsrf, type PageTheme, type RenderedPage } from './index.js'
import { renderCardPage } from './steps.js'

/** A session as the page lists it (`expires` may be unknown for a JWT session). */
export type ListedSession = Omit<SessionInfo, 'expires'> & { expires: string | null }

const BROWSERS: [RegExp, string][] = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\bOPR\//, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\b(?:Firefox|FxiOS)\//, 'Firefox'],
  [/\b(?:HeadlessChrome|Chrome|Chromium|CriOS)\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
]
const SYSTEMS: [RegExp, string][] = [
  [/\b(?:iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
]

/** "Chrome on Linux" for a browser's user agent; the first 60 characters of anything else. */
export function describeUserAgent(userAgent: string | null): string {
  if (!userAgent) return 'Unknown browser'
  const browser = BROWSERS.find(([pattern]) => pattern.test(userAgent))?.[1]
  const system = SYSTEMS.find(([pattern]) => pattern.test(userAgent))?.[1]
  if (browser && system) return `${browser} on ${system}`
  if (browser ?? system) return (browser ?? system)!
  return userAgent.length > 60 ? `${userAgent.slice(0, 59)}…` : userAgent
}

// Built on first use: a date format loads the runtime's locale data, a cost every cold start
// would pay for a page few requests render.
let timeFormat: Intl.DateTimeFormat | undefined

/** An ISO 8601 time as "23 Nov 2026, 12:00 UTC". */
export function readableTime(iso: string): string {
  timeFormat ??= new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' })
  return `${timeFormat.format(new Date(iso))} UTC`
}

function revokeForm(action: string, csrfToken: string, fields: Record<string, string>, button: string, label?: string): string {
  const hidden = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('')
  const aria = label ? ` aria-label="${escapeHtml(label)}"` : ''
  return `<form action="${escapeHtml(action)}" method="POST">${hiddenCsrf(csrfToken)}${hidden}<button type="submit" class="secondary"${aria}>${escapeHtml(button)}</button></form>`
}

function sessionItem(session: ListedSession, action: string, csrfToken: string, canRevokeOne: boolean): string {
  const browser = describeUserAgent(session.userAgent)
  const times = [
    session.createdAt ? `Signed in ${readableTime(session.createdAt)}` : null,
    session.lastSeenAt ? `last active ${readableTime(session.lastSeenAt)}` : null,
  ].filter(Boolean)
  const signedIn = session.createdAt ? `, signed in ${readableTime(session.createdAt)}` : ''
  return (
    `<li class="session"><p><strong>${escapeHtml(browser)}</strong>${session.current ? ' <span class="badge">This browser</span>' : ''}</p>` +
    (times.length > 0 ? `<p class="muted">${escapeHtml(times.join(', '))}</p>` : '') +
    (canRevokeOne && !session.current
      ? revokeForm(action, csrfToken, { revoke: 'one', id: session.id }, 'Sign out', `Sign out ${browser}${signedIn}`)
      : '') +
    '</li>'
  )
}

/** The sessions page of a signed-in user. */
export function renderSessionsPage(
  theme: PageTheme,
  p: {
    sessions: readonly ListedSession[]
    /** `{basePath}/sessions`, where the buttons post. */
    action: string
    csrfToken: string
    /** Database sessions: each other session can be signed out alone. */
    canRevokeOne: boolean
    /** Signing out everywhere is possible (database sessions, or JWT sessions with a store). */
    canRevokeAll: boolean
    /** How many sessions the last button signed out, to confirm it. */
    revoked?: number
  },
): RenderedPage {
  const others = p.sessions.filter((session) => !session.current).length
  const notice =
    p.revoked === undefined
      ? ''
      : `<p class="notice" role="status">Signed out of ${p.revoked} session${p.revoked === 1 ? '' : 's'}.</p>`
  const list = `<ul class="sessions">${p.sessions.map((session) => sessionItem(session, p.action, p.csrfToken, p.canRevokeOne)).join('')}</ul>`
  const buttons =
    (p.canRevokeOne && others > 1 ? revokeForm(p.action, p.csrfToken, { revoke: 'others' }, 'Sign out of every other session') : '') +
    (p.canRevokeAll ? revokeForm(p.action, p.csrfToken, { revoke: 'all' }, 'Sign out everywhere, this browser too') : '')
  return renderCardPage(
    'Your sessions',
    theme,
    `<h1>Your sessions</h1>${notice}<p>Where your account is signed in. Sign out of any session you do not recognise.</p>${list}${buttons}`,
  )
}

/** The sessions page when this configuration cannot list sessions (the reason is logged). */
export function renderSessionsUnavailablePage(theme: PageTheme): RenderedPage {
  return renderCardPage('Your sessions', theme, '<h1>Your sessions</h1><p>This site cannot list your sessions.</p>', 400)
}
