import type { AuthConfig } from 'authchart'
import GitHub from 'authchart/providers/github'
import Google from 'authchart/providers/google'
import OIDC from 'authchart/providers/oidc'

const env = process.env

export const config = {
  secret: env.AUTH_SECRET,
  // In production, only the hosts you serve: a forged Host gets 400, never a link or a redirect.
  trustHost: process.env.NODE_ENV === 'production' ? ['app.example.com'] : true,
  providers: [
    GitHub({ clientId: env.AUTH_GITHUB_ID, clientSecret: env.AUTH_GITHUB_SECRET }),
    Google({ clientId: env.AUTH_GOOGLE_ID, clientSecret: env.AUTH_GOOGLE_SECRET, refreshTokens: true }),
    OIDC({ id: 'corp', issuer: 'https://sso.corp.example', clientId: env.CORP_ID, clientSecret: env.CORP_SECRET, logout: true }),
  ],
} satisfies AuthConfig
