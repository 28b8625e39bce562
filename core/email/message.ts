/**
 * The default sign-in message, HTML and text, as Auth.js writes it (`lib/utils/email.ts`), with
 * the one-time code added below the button when the provider sends codes.
 *
 * @module
 */
import { escapeHtml } from '../pages/html.js'

/** The look of the message: the pages' theme colours. */
export interface MessageTheme {
  brandColor?: string
  buttonText?: string
}

/** What the message says. */
export interface MessageParams {
  url: string
  host: string
  theme: MessageTheme
  /** The one-time code, when the provider sends one. */
  code?: string
}

/**
 * The HTML body. The host gets invisible spaces so mail clients do not turn it into a link (it
 * would look like the thing to click); the address is left out so nothing needs escaping, as in
 * Auth.js.
 */
export function html({ url, host, theme, code }: MessageParams): string {
  const escapedHost = host.replace(/\./g, '&#8203;.')
  const brandColor = theme.brandColor || '#346df1'
  const buttonText = theme.buttonText || '#fff'
  const color = {
    background: '#f9f9f9',
    text: '#444',
    mainBackground: '#fff',
    buttonBackground: brandColor,
    buttonBorder: brandColor,
    buttonText,
  }
  const codeRow =
    code === undefined
      ? ''
      : `
    <tr>
      <td align="center"
        style="padding: 0px 0px 10px 0px; font-size: 16px; line-height: 22px; font-family: Helvetica, Arial, sans-serif; color: ${color.text};">
        Or enter this code on the sign-in page: <strong style="font-size: 22px; letter-spacing: 4px; font-family: monospace;">${escapeHtml(code)}</strong>
      </td>
    </tr>`
  return `
<body style="background: ${color.background};">
  <table width="100%" border="0" cellspacing="20" cellpadding="0"
    style="background: ${color.mainBackground}; max-width: 600px; margin: auto; border-radius: 10px;">
    <tr>
      <td align="center"
        style="padding: 10px 0px; font-size: 22px; font-family: Helvetica, Arial, sans-serif; color: ${color.text};">
        Sign in to <strong>${escapedHost}</strong>
      </td>
    </tr>
    <tr>
      <td align="center" style="padding: 20px 0;">
        <table border="0" cellspacing="0" cellpadding="0">
          <tr>
            <td align="center" style="border-radius: 5px;" bgcolor="${color.buttonBackground}"><a href="${url}"
                target="_blank"
                style="font-size: 18px; font-family: Helvetica, Arial, sans-serif; color: ${color.buttonText}; text-decoration: none; border-radius: 5px; padding: 10px 20px; border: 1px solid ${color.buttonBorder}; display: inline-block; font-weight: bold;">Sign
                in</a></td>
          </tr>
        </table>
      </td>
    </tr>${codeRow}
    <tr>
      <td align="center"
        style="padding: 0px 0px 10px 0px; font-size: 16px; line-height: 22px; font-family: Helvetica, Arial, sans-serif; color: ${color.text};">
        If you did not request this email you can safely ignore it.
      </td>
    </tr>
  </table>
</body>
`
}

/** The text body, for mail clients that do not render HTML. */
export function text({ url, host, code }: Pick<MessageParams, 'url' | 'host' | 'code'>): string {
  return `Sign in to ${host}\n${url}\n\n${code === undefined ? '' : `Or enter this code on the sign-in page: ${code}\n\n`}`
}

/** What a re-authentication's message says: the action it confirms, and its code. */
export interface ConfirmationParams {
  host: string
  theme: MessageTheme
  /** The action being confirmed, as the page names it ("sign out everywhere, this browser too"). */
  action: string
  code: string
}

/**
 * The message of a re-authentication's code: it names the action the code confirms, never "Sign
 * in" (the user is signed in; a code they did not ask for means someone holds their session). It
 * has no link: the code is typed on the page that asked.
 */
export function confirmationMessage({ host, theme, action, code }: ConfirmationParams): { subject: string; html: string; text: string } {
  const color = theme.brandColor || '#346df1'
  const style = 'font-family: Helvetica, Arial, sans-serif; color: #444;'
  return {
    subject: `Your code to confirm: ${action} (${host})`,
    html: `
<body style="background: #f9f9f9;">
  <table width="100%" border="0" cellspacing="20" cellpadding="0" style="background: #fff; max-width: 600px; margin: auto; border-radius: 10px;">
    <tr><td align="center" style="padding: 10px 0px; font-size: 20px; ${style}">Confirm it's you to ${escapeHtml(action)} on <strong>${host.replace(/\./g, '&#8203;.')}</strong></td></tr>
    <tr><td align="center" style="padding: 10px 0px; font-size: 16px; ${style}">Your code: <strong style="font-size: 22px; letter-spacing: 4px; font-family: monospace; color: ${escapeHtml(color)};">${escapeHtml(code)}</strong></td></tr>
    <tr><td align="center" style="padding: 0px 0px 10px 0px; font-size: 14px; line-height: 20px; ${style}">If you did not ask for this code, someone may be using your session: sign out everywhere and change your password.</td></tr>
  </table>
</body>
`,
    text: `Confirm it's you to ${action} on ${host}.\n\nYour code: ${code}\n\nIf you did not ask for this code, someone may be using your session: sign out everywhere and change your password.\n`,
  }
}
