import type { AuthConfig } from 'authchart'
import Passkey from 'authchart/providers/passkey' // or WebAuthn from 'authchart/providers/webauthn'
import { adapter } from './database.js' // stores users, accounts and authenticators

const env = process.env

export const config = {
  secret: env.AUTH_SECRET,
  // In production, only the hosts you serve: a forged Host gets 400, never a link or a redirect.
  trustHost: env.NODE_ENV === 'production' ? ['app.example.com'] : true,
  adapter,
  experimental: { enableWebAuthn: true }, // experimental, as in Auth.js
  providers: [
    Passkey({
      relayingParty: {
        id: env.AUTH_RP_ID ?? 'example.com',
        name: 'Example',
        origin: env.AUTH_RP_ORIGIN ?? 'https://example.com',
      },
    }),
  ],
} satisfies AuthConfig
