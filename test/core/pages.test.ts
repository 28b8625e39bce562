import { beforeAll, describe, expect, it } from 'vitest'
import { credentialsSignInForm } from '../../core/flows/credentials/page.js'
import { emailSignInForm } from '../../core/flows/email/page.js'
import { webauthnModule } from '../../core/flows/webauthn/index.js'
import { oauthSignInForm } from '../../core/flows/oauth/page.js'
import { webauthnSignInForm } from '../../core/flows/webauthn/page.js'
import {
  breakableAddress,
  renderEmailConfirmPage,
  renderErrorPage,
  renderSignInPage,
  renderSignOutPage,
  renderVerifyRequestPage,
  signInErrorMessage,
  type PageProvider,
  type PageTheme,
} from '../../core/pages/index.js'

// The passkey form comes with the WebAuthn flow, which the handler loads before a request needs it.
beforeAll(() => webauthnModule.load!())

const theme: PageTheme = { colorScheme: 'auto', logo: '', brandColor: '', buttonText: '' }
const url = new URL('https://app.test/auth/error')
const oauth: PageProvider = {
  id: 'github',
  name: 'GitHub',
  type: 'oauth',
  signinUrl: 'https://app.test/auth/signin/github',
  callbackUrl: 'https://app.test/auth/callback/github',
  config: {},
  form: oauthSignInForm,
}
const credentials: PageProvider = {
  id: 'credentials',
  name: 'Credentials',
  type: 'credentials',
  signinUrl: 'https://app.test/auth/signin/credentials',
  callbackUrl: 'https://app.test/auth/callback/credentials',
  config: { credentials: { username: { label: 'Username', autocomplete: 'username' }, password: { type: 'password' } } },
  form: credentialsSignInForm,
}

describe('the sign-in page', () => {
  it('renders one input per configured credential, with its attributes', () => {
    const { status, html } = renderSignInPage({ theme, providers: [credentials], csrfToken: 't' })
    expect(status).toBe(200)
    expect(html).toContain('<title>Sign In</title>')
    expect(html).toContain('<input name="username" id="input-username-for-credentials-provider" type="text" placeholder="" autofocus autocomplete="username">')
    expect(html).toContain('type="password"')
    expect(html).toContain('<form action="https://app.test/auth/callback/credentials" method="POST" data-credentials="credentials">')
  })

  it('labels a credentials field without a label by its capitalised key, and keeps a given label', () => {
    const { html } = renderSignInPage({
      theme,
      providers: [{ ...credentials, config: { credentials: { username: {}, otp: { label: 'One-time code' } } } }],
      csrfToken: 't',
    })
    expect(html).toContain('<label class="section-header" for="input-username-for-credentials-provider">Username</label>')
    expect(html).toContain('<label class="section-header" for="input-otp-for-credentials-provider">One-time code</label>')
  })

  it('renders an OAuth button posting the CSRF token and callback URL to the provider sign-in URL', () => {
    const { html } = renderSignInPage({ theme, providers: [oauth], csrfToken: 'tok', callbackUrl: 'https://app.test/x' })
    expect(html).toContain('<form action="https://app.test/auth/signin/github" method="POST">')
    expect(html).toContain('<input type="hidden" name="csrfToken" value="tok">')
    expect(html).toContain('<input type="hidden" name="callbackUrl" value="https://app.test/x">')
    expect(html).toContain('Sign in with GitHub')
  })

  it('separates form providers from buttons with a rule, as Auth.js does', () => {
    const { html } = renderSignInPage({ theme, providers: [oauth, credentials, oauth], csrfToken: 't' })
    expect(html.match(/<hr>/g)).toHaveLength(2)
  })

  it.each([
    ['OAuthSignin', 'Try signing in with a different account.'],
    // The provider sent an `error` back (the user pressed Cancel there): another account is no answer.
    ['OAuthCallbackError', 'The sign-in was cancelled or refused at the provider. Try again, or choose another way to sign in.'],
    ['OAuthAccountNotLinked', 'To confirm your identity, sign in with the same account you used originally.'],
    ['EmailSignin', 'The e-mail could not be sent.'],
    ['CredentialsSignin', 'Sign in failed. Check the details you provided are correct.'],
    ['SessionRequired', 'Please sign in to access this page.'],
    ['Whatever', 'Unable to sign in.'],
    ['toString', 'Unable to sign in.'],
  ])('shows the message for %s', (error, message) => {
    expect(signInErrorMessage(error)).toBe(message)
    expect(renderSignInPage({ theme, providers: [], csrfToken: 't', error }).html).toContain(message)
  })

  it('escapes provider names, callback URLs and credential attributes (no script injection)', () => {
    const hostile: PageProvider = {
      ...credentials,
      name: '<script>alert(1)</script>',
      config: { credentials: { '"><script>': { label: '<img src=x onerror=alert(1)>', onfocus: 'alert(1)' } } },
    }
    const { html } = renderSignInPage({
      theme,
      providers: [hostile, { ...oauth, name: '<b>x</b>' }],
      csrfToken: '"><script>alert(1)</script>',
      callbackUrl: '"><script>alert(1)</script>',
      email: '"><script>',
    })
    // The page's own script (keeping the typed username) is the only script element.
    expect(html.match(/<script/g)).toHaveLength(1)
    expect(html.replace(/<script>\(function \(\) \{\n  'use strict'\n  var KEY = 'authchart\.signin\.typed'[\s\S]*?<\/script>/, '')).not.toMatch(/<script|<img src=x|onfocus=|<b>x/)
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
  })

  it('keeps theme colours from closing the style element', () => {
    const { html } = renderSignInPage({
      theme: { ...theme, brandColor: 'red;}</style><script>alert(1)</script>' },
      providers: [],
      csrfToken: 't',
    })
    expect(html).not.toContain('</style><script>')
  })

  it('loads nothing from third-party hosts', () => {
    const { html } = renderSignInPage({ theme, providers: [oauth, credentials], csrfToken: 't' })
    const urls = html.match(/(?:src|href)="([^"]+)"/g) ?? []
    expect(urls).toEqual([])
  })
})

describe('the sign-in page with several form providers', () => {
  const email: PageProvider = { id: 'email', name: 'Email', type: 'email', signinUrl: 'https://app.test/auth/signin/email', callbackUrl: 'https://app.test/auth/callback/email', config: {}, form: emailSignInForm }
  const passkey: PageProvider = {
    id: 'passkey',
    name: 'Passkey',
    type: 'webauthn',
    signinUrl: 'https://app.test/auth/signin/passkey',
    callbackUrl: 'https://app.test/auth/callback/passkey',
    config: { formFields: { email: { label: 'Email', required: true, autocomplete: 'username webauthn' } } },
    form: webauthnSignInForm,
  }
  const ids = (html: string) => [...html.matchAll(/\sid="([^"]*)"/g)].map((m) => m[1])
  /** The labels of the providers' fields (not the passkey form's own code field, hidden until a sign-up needs it). */
  const labels = (html: string) =>
    [...html.matchAll(/<label[^>]*>([^<]*)<\/label>/g)].map((m) => m[1]).filter((label) => label !== 'Code from the e-mail')

  it('gives every element a unique id, keeping Auth.js\'s submitButton for the first form', () => {
    const { html } = renderSignInPage({ theme, providers: [oauth, credentials, email, passkey], csrfToken: 't', authUrl: 'https://app.test/auth' })
    expect(ids(html)).toEqual([...new Set(ids(html))])
    expect(ids(html)).toEqual(expect.arrayContaining(['submitButton', 'submitButton-email', 'submitButton-passkey']))
    expect(html).toContain('<button id="submitButton" type="submit">Sign in with Credentials</button>')
  })

  it('labels the e-mail and passkey fields apart', () => {
    expect(labels(renderSignInPage({ theme, providers: [email, passkey], csrfToken: 't' }).html)).toEqual(['Email', 'Email (Passkey)'])
    // Whatever the order, the e-mail provider keeps the plain label.
    expect(labels(renderSignInPage({ theme, providers: [passkey, email], csrfToken: 't' }).html)).toEqual(['Email (Passkey)', 'Email'])
    // Alone, each keeps its own.
    expect(labels(renderSignInPage({ theme, providers: [passkey], csrfToken: 't' }).html)).toEqual(['Email'])
  })

  it('focuses the first field of the page and no other', () => {
    for (const providers of [[oauth, credentials, email, passkey], [email, credentials], [passkey, email]]) {
      const { html } = renderSignInPage({ theme, providers, csrfToken: 't' })
      const focused = [...html.matchAll(/<input [^>]*>/g)].map((m) => m[0]).filter((input) => / autofocus[\s>]/.test(input))
      const first = [...html.matchAll(/<input [^>]*>/g)].map((m) => m[0]).find((input) => !input.includes('type="hidden"'))
      expect(focused).toEqual([first])
    }
  })

  it('shows the error in the same alert box as every other page', () => {
    const { html } = renderSignInPage({ theme, providers: [credentials], csrfToken: 't', error: 'CredentialsSignin' })
    expect(html).toContain('<div class="error" role="alert"><p>Sign in failed. Check the details you provided are correct.</p></div>')
  })
})

describe('the e-mail link confirmation page', () => {
  it('lets a long address wrap only before its @ and its dots', () => {
    expect(breakableAddress('ada.lovelace@analytical-engine.example')).toBe('ada<wbr>.lovelace<wbr>@analytical-engine<wbr>.example')
    expect(breakableAddress('"<b>"@x.test')).toBe('&quot;&lt;b&gt;&quot;<wbr>@x<wbr>.test')
    const { html } = renderEmailConfirmPage({
      theme,
      csrfToken: 't',
      actionUrl: 'https://app.test/auth/callback/email',
      email: 'ada.lovelace@example.com',
      token: 'tok',
      callbackUrl: '/',
    })
    expect(html).toContain('<strong class="address">ada<wbr>.lovelace<wbr>@example<wbr>.com</strong>')
    expect(html).toContain('<input type="hidden" name="email" value="ada.lovelace@example.com">')
  })
})

describe('the other pages', () => {
  it('renders the sign-out confirmation posting to the given action', () => {
    const { status, html } = renderSignOutPage({ theme, csrfToken: 't', actionUrl: 'https://app.test/auth/signout' })
    expect(status).toBe(200)
    expect(html).toContain('<h1>Sign out</h1><p>Are you sure you want to sign out?</p><form action="https://app.test/auth/signout" method="POST">')
  })

  it('asks only a signed-in browser to confirm signing out, and offers the way back either way', () => {
    const asking = renderSignOutPage({ theme, csrfToken: 't', actionUrl: 'https://app.test/auth/signout', backUrl: 'https://app.test' }).html
    expect(asking).toContain('Are you sure you want to sign out?')
    expect(asking).toContain('<p class="back"><a href="https://app.test">Cancel</a></p>')
    const nobody = renderSignOutPage({ theme, csrfToken: 't', actionUrl: 'https://app.test/auth/signout', signedOut: true, backUrl: 'https://app.test' }).html
    expect(nobody).toContain('<p>You are not signed in.</p>')
    expect(nobody).not.toContain('<form')
    expect(nobody).toContain('<a href="https://app.test">Back</a>')
  })

  it('heads the sign-in page, says who is signed in already, and links back to where the user came from', () => {
    const base = { theme, providers: [], csrfToken: 't' }
    const plain = renderSignInPage(base).html
    expect(plain).toContain('<h1>Sign in</h1>')
    expect(plain).not.toContain('You are signed in as')
    expect(plain).not.toContain('class="back"')
    const signedIn = renderSignInPage({ ...base, signedInAs: 'ada<b>@example.com', backUrl: 'https://app.test/x?a=1&b=2' }).html
    expect(signedIn).toContain('You are signed in as <strong class="address">ada&lt;b&gt;<wbr>@example<wbr>.com</strong>')
    expect(signedIn).toContain('<a href="https://app.test/x?a=1&amp;b=2">Back</a>')
  })

  it('renders the verify-request page with a link to the site', () => {
    const { html } = renderVerifyRequestPage({ theme, url })
    expect(html).toContain('<h1>Check your email</h1>')
    expect(html).toContain('<a class="site" href="https://app.test">app.test</a>')
  })

  it.each([
    ['Configuration', 500, 'Server error'],
    ['AccessDenied', 403, 'Access Denied'],
    ['Verification', 403, 'Unable to sign in'],
    [undefined, 200, 'Error'],
    ['constructor', 200, 'Error'],
  ])('renders the error page for %s with status %i', (error, status, heading) => {
    const page = renderErrorPage({ theme, url, signInUrl: 'https://app.test/auth/signin', ...(error ? { error } : {}) })
    expect(page.status).toBe(status)
    expect(page.html).toContain(`<h1>${heading}</h1>`)
  })

  it('says why in an extension\'s words when it refused, and keeps Auth.js\'s text otherwise', () => {
    const declined = renderErrorPage({ theme, url, signInUrl: 'https://app.test/auth/signin', error: 'AccessDenied', denial: 'You declined <the terms>.' })
    expect(declined.status).toBe(403)
    expect(declined.html).toContain('<h1>Not signed in</h1>')
    expect(declined.html).toContain('<p>You declined &lt;the terms&gt;.</p>')
    expect(declined.html).not.toContain('permission')
    const refused = renderErrorPage({ theme, url, signInUrl: 'https://app.test/auth/signin', error: 'AccessDenied' })
    expect(refused.html).toContain('You do not have permission to sign in.')
  })

  it('applies the colour scheme, brand colour and logo', () => {
    const { html } = renderSignOutPage({
      theme: { colorScheme: 'light', logo: 'https://cdn.test/l.png', brandColor: '#123456', buttonText: '#fff' },
      csrfToken: 't',
      actionUrl: '/x',
    })
    expect(html).toContain('<body class="__next-auth-theme-light">')
    expect(html).toContain('<style>:root{--brand-color:#123456}</style>')
    expect(html).toContain('<style>:root{--button-text-color:#fff}</style>')
    expect(html).toContain('<img src="https://cdn.test/l.png" alt="Logo" class="logo">')
  })
})
