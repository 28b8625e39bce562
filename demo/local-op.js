// "Local OP": a real OpenID Provider (npm `oidc-provider`) mounted at /op inside the demo app, so
// "Sign in with Local OP" works offline. Its login page asks nothing but a click: it signs in as
// the demo's OP user. Not for production: keys and grants live in memory.
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import Provider from 'oidc-provider'

/** The account the Local OP signs in as. */
export const LOCAL_OP_USER = {
  sub: 'local-op-user',
  name: 'Olivia Provider',
  email: 'olivia@local-op.example',
  email_verified: true,
}

const escapeHtml = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

const opPage = (body) => `<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Local OP</title><link rel="icon" href="/favicon.ico"><style>body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem}
button{font:inherit;padding:.5rem 1rem;margin-right:.5rem}</style></head><body>
<h1>Local OP</h1>${body}</body></html>`

const loginPage = (uid, clientId) =>
  opPage(`<p><strong>${escapeHtml(clientId)}</strong> asks to sign you in as
<strong>${escapeHtml(LOCAL_OP_USER.name)}</strong> (${escapeHtml(LOCAL_OP_USER.email)}).</p>
<form method="post" action="/op/interaction/${escapeHtml(uid)}">
<button name="decision" value="accept" id="accept">Continue</button>
<button name="decision" value="deny" id="deny">Cancel</button></form>`)

// The app signs out with `logout: true`, so the browser comes here too: without it the next
// "Sign in with Local OP" would reuse this provider's session and skip its login page silently.
// `form` is oidc-provider's own (it carries the anti-forgery token); the buttons submit it.
const logoutPage = (form) =>
  opPage(`<p>You signed out of the demo. Sign out of Local OP as well?</p>${form}
<button type="submit" form="op.logoutForm" name="logout" value="yes" id="logout">Sign out of Local OP</button>
<button type="submit" form="op.logoutForm" id="stay">Stay signed in here</button>`)

/** Lifetimes in seconds (oidc-provider asks for explicit ones). */
const TTL = { AccessToken: 3600, IdToken: 3600, Interaction: 3600, Session: 86_400, Grant: 86_400 }

async function readForm(req) {
  const chunks = []
  for await (const chunk of req) chunks.push(chunk)
  return new URLSearchParams(Buffer.concat(chunks).toString())
}

/**
 * Creates the Local OP for an app on `origins` (each may be used by the browser).
 * Returns the issuer, the client credentials, and a raw Node request handler for `/op/*`.
 */
export function createLocalOp({ issuer, origins }) {
  const client = { clientId: 'authchart-demo', clientSecret: randomBytes(32).toString('base64url') }
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: client.clientId,
        client_secret: client.clientSecret,
        redirect_uris: origins.map((origin) => `${origin}/auth/callback/local-op`),
        post_logout_redirect_uris: origins.map((origin) => `${origin}/signed-out`),
      },
    ],
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ ...LOCAL_OP_USER, sub }) }),
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    conformIdTokenClaims: false,
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx, form) => {
          ctx.type = 'html'
          ctx.body = logoutPage(form)
        },
      },
    },
    ttl: TTL,
    interactions: { url: (_ctx, interaction) => `/op/interaction/${interaction.uid}` },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    // A fresh signing key per start: the demo's OP forgets everything on restart anyway.
    jwks: { keys: [{ ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), kid: 'local-op', alg: 'RS256', use: 'sig' }] },
  })
  const callback = provider.callback()

  /** Serves a request whose URL starts with /op. */
  async function handle(req, res) {
    const path = req.url.slice('/op'.length) || '/'
    const interaction = /^\/interaction\/([\w-]+)$/.exec(path.split('?')[0])
    if (!interaction) {
      // Mounted under /op: oidc-provider reads the mount path from originalUrl.
      req.originalUrl = req.url
      req.url = path
      return callback(req, res)
    }
    try {
      const details = await provider.interactionDetails(req, res)
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        return res.end(loginPage(details.uid, details.params.client_id))
      }
      const form = await readForm(req)
      if (form.get('decision') !== 'accept') {
        return await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'Cancelled at the Local OP.' }, { mergeWithLastSubmission: false })
      }
      const grant = new provider.Grant({ accountId: LOCAL_OP_USER.sub, clientId: details.params.client_id })
      grant.addOIDCScope(String(details.params.scope ?? 'openid'))
      const grantId = await grant.save()
      await provider.interactionFinished(req, res, { login: { accountId: LOCAL_OP_USER.sub }, consent: { grantId } }, { mergeWithLastSubmission: false })
    } catch (error) {
      res.writeHead(400, { 'content-type': 'text/plain' })
      res.end(`Local OP: ${error.message}`)
    }
  }
  return { issuer, client, handle }
}
