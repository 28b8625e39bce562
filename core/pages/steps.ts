/**
 * The pages of flow steps: a flow waiting for the user (a second-factor code, an application's
 * terms) renders one, and so do a few flow outcomes (backup codes shown once). Same frame and card
 * as the other built-in pages; every value is escaped on its way in.
 *
 * @module
 */
import type { StepPage, StepView } from '../extensions.js'
import { escapeHtml } from './html.js'
import { errorBox, hiddenCsrf, logo, shell, themeStyles, type PageTheme, type RenderedPage } from './index.js'
import { CODE_MESSAGES } from './messages.js'
import { inlineScript } from './policy.js'

/** A card page with `title` around `html`. */
export function renderCardPage(title: string, theme: PageTheme, html: string, status = 200): RenderedPage {
  return {
    status,
    html: shell(escapeHtml(title), theme, `<div class="step">${themeStyles(theme)}<div class="card">${logo(theme)}${html}</div></div>`),
  }
}

/**
 * A form posting to the step, CSRF token included. `event` names the step event the button sends
 * when the step takes more than one (e.g. accept or decline).
 */
export function stepForm(view: StepView, fields: string, button: string, event?: string, look: ButtonLook = 'primary'): string {
  const eventField = event ? `<input type="hidden" name="event" value="${escapeHtml(event)}">` : ''
  const buttonClass = look === 'secondary' ? ' class="secondary"' : ''
  return `<form action="${escapeHtml(view.action)}" method="POST">${hiddenCsrf(view.csrfToken)}${eventField}${fields}<button type="submit"${buttonClass}>${escapeHtml(button)}</button></form>`
}

/** How a step's button looks: `secondary` for the choice that is not the way on (decline, cancel). */
export type ButtonLook = 'primary' | 'secondary'

const STEP_ERRORS: Record<string, string> = {
  InvalidCode: CODE_MESSAGES.wrongCode,
  CodeUsed: CODE_MESSAGES.codeUsed,
  TooManyAttempts: CODE_MESSAGES.codesTried,
}

/** The error line of a step page. */
export function stepError(view: StepView): string {
  if (!view.error) return ''
  return errorBox(STEP_ERRORS[view.error] ?? 'That did not work. Try again.')
}

const codeField = (label: string, autocomplete: string) =>
  `<label for="code">${escapeHtml(label)}</label><input id="code" name="code" type="text" inputmode="text" autocomplete="${autocomplete}" autofocus required spellcheck="false" maxlength="24">`

/** The second-factor step of a sign-in: a code from the authenticator app, or a backup code. */
export const secondFactorPage: StepPage = (view) => ({
  title: 'Two-step verification',
  html:
    `<h1>Two-step verification</h1>${stepError(view)}` +
    `<p>Enter the 6-digit code from your authenticator app${view.user?.email ? ` for ${escapeHtml(view.user.email)}` : ''}, or one of your backup codes.</p>` +
    stepForm(view, codeField('Code', 'one-time-code'), 'Verify'),
})

/** Enrolment: the QR code and secret for the authenticator app, and the code that confirms it. */
export const totpEnrolmentPage: StepPage = (view) => ({
  title: 'Set up two-step verification',
  html:
    `<h1>Set up two-step verification</h1>${stepError(view)}` +
    `<p>Scan this code with your authenticator app, then enter the 6-digit code it shows.</p>` +
    // The SVG is produced by the qrcode library from our own URI: no user input reaches it.
    `<div class="qr" role="img" aria-label="QR code for your authenticator app">${String(view.data.qr ?? '')}</div>` +
    `<p>Or enter this key by hand: <code class="secret">${escapeHtml(view.data.secret)}</code></p>` +
    stepForm(view, codeField('Code from the app', 'one-time-code'), 'Turn on'),
})

/** Copies the backup codes the page shows to the clipboard (the button is shown only where that works). */
const COPY_CODES = inlineScript(`(function () {
  'use strict'
  var button = document.getElementById('copy-codes')
  if (!button || !navigator.clipboard) return
  button.hidden = false
  button.addEventListener('click', function () {
    var codes = Array.prototype.map.call(document.querySelectorAll('.codes code'), function (c) { return c.textContent }).join('\\n')
    navigator.clipboard.writeText(codes).then(function () { button.textContent = 'Copied' }, function () { button.textContent = 'Copy failed: select the codes instead' })
  })
})()`)

/**
 * The backup codes, shown once: when a second factor is turned on (`title` "Two-step verification
 * is on") and when new ones replace them. They can be copied, or downloaded as a text file.
 */
export function renderBackupCodesPage(
  theme: PageTheme,
  codes: readonly string[],
  continueUrl: string,
  heading = 'Two-step verification is on',
): RenderedPage {
  const file = `data:text/plain;charset=utf-8,${encodeURIComponent(codes.join('\n') + '\n')}`
  return renderCardPage(
    'Backup codes',
    theme,
    `<h1>${escapeHtml(heading)}</h1><p>Keep these backup codes somewhere safe. Each one signs you in once if you lose your authenticator app; they are not shown again.</p>` +
      `<ul class="codes">${codes.map((code) => `<li><code>${escapeHtml(code)}</code></li>`).join('')}</ul>` +
      `<p><button id="copy-codes" type="button" class="secondary" hidden>Copy the codes</button></p>` +
      `<p><a class="button secondary" href="${escapeHtml(file)}" download="backup-codes.txt">Download the codes</a></p>` +
      `<p><a class="button" href="${escapeHtml(continueUrl)}">Done</a></p><script>${COPY_CODES}</script>`,
  )
}

/**
 * A signed-in user's second-factor settings: on or off, how to turn it on, new backup codes, and
 * turning it off, which asks first (`confirmingDisable`: the page that asks).
 */
export function renderTwoFactorPage(
  theme: PageTheme,
  p: { enrolled: boolean; backupCodesLeft: number; action: string; csrfToken: string; confirmingDisable?: boolean },
): RenderedPage {
  const form = (action: string, button: string, look: ButtonLook = 'primary') =>
    `<form action="${escapeHtml(p.action)}" method="POST">${hiddenCsrf(p.csrfToken)}<input type="hidden" name="action" value="${action}">` +
    `<button type="submit"${look === 'secondary' ? ' class="secondary"' : ''}>${button}</button></form>`
  if (p.enrolled && p.confirmingDisable) {
    return renderCardPage(
      'Turn off two-step verification',
      theme,
      `<h1>Turn off two-step verification?</h1><p>You will no longer be asked for a code when you sign in, and your backup codes stop working.</p>` +
        form('disable', 'Turn off two-step verification') +
        `<p class="back"><a href="${escapeHtml(p.action)}">Cancel</a></p>`,
    )
  }
  const body = p.enrolled
    ? `<p>Two-step verification is <strong>on</strong>. ${p.backupCodesLeft} backup code${p.backupCodesLeft === 1 ? '' : 's'} left.</p>` +
      form('regenerate-backup-codes', 'Get new backup codes', 'secondary') +
      `<p class="muted">New codes replace the ones you have.</p>` +
      `<p><a class="button secondary" href="${escapeHtml(`${p.action}?confirm=disable`)}">Turn off two-step verification…</a></p>`
    : `<p>Two-step verification is <strong>off</strong>. Turn it on to be asked for a code from an authenticator app when you sign in.</p>` +
      `<form action="${escapeHtml(p.action)}" method="POST">${hiddenCsrf(p.csrfToken)}<button type="submit">Turn on two-step verification</button></form>`
  return renderCardPage('Two-step verification', theme, `<h1>Two-step verification</h1>${body}`)
}
