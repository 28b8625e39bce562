import type { AuthConfig } from 'authchart'
import Nodemailer from 'authchart/providers/nodemailer'
import Resend from 'authchart/providers/resend'
import { adapter } from './database.js'

const env = process.env

export const config = {
  secret: env.AUTH_SECRET,
  // In production, only the hosts you serve: a forged Host gets 400, never a link or a redirect.
  trustHost: env.NODE_ENV === 'production' ? ['app.example.com'] : true,
  adapter, // required, as in Auth.js: the token's hash is stored, the user created or verified
  providers: [
    Nodemailer({ server: env.EMAIL_SERVER ?? 'smtp://localhost:25', from: 'Example <no-reply@example.com>' }),
    Resend({ from: 'no-reply@example.com', code: true }), // key from AUTH_RESEND_KEY
  ],
} satisfies AuthConfig
