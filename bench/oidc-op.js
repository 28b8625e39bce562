// The benchmark's OpenID Provider (npm oidc-provider), in its own process so its CPU time is not
// charged to the library under test. Prints nothing; sends its issuer to the parent over IPC.
import { createServer } from 'node:http'
import { generateKeyPairSync } from 'node:crypto'
import Provider from 'oidc-provider'

const server = createServer()
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
const issuer = `http://127.0.0.1:${server.address().port}`
const key = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' })
const provider = new Provider(issuer, {
  clients: [
    {
      client_id: 'bench',
      client_secret: 's'.repeat(48),
      redirect_uris: ['https://bench.test/auth/callback/op'],
    },
  ],
  jwks: { keys: [{ ...key, kid: 'bench', alg: 'RS256', use: 'sig' }] },
  findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub, name: 'Alice', email: 'a@x.test' }) }),
  claims: { openid: ['sub'], email: ['email'], profile: ['name'] },
  conformIdTokenClaims: false,
  features: { devInteractions: { enabled: false } },
  pkce: { required: () => false },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
})
const callback = provider.callback()
server.on('request', async (req, res) => {
  if (!req.url.startsWith('/interaction/')) return callback(req, res)
  const details = await provider.interactionDetails(req, res)
  const grant = new provider.Grant({ accountId: 'alice', clientId: details.params.client_id })
  grant.addOIDCScope(String(details.params.scope ?? 'openid'))
  const grantId = await grant.save()
  await provider.interactionFinished(req, res, { login: { accountId: 'alice' }, consent: { grantId } }, { mergeWithLastSubmission: false })
})
process.send?.({ issuer })
process.on('disconnect', () => process.exit(0))
