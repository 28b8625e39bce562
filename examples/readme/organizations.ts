import type { AuthConfig } from 'authchart'
import { MemoryAdapter } from 'authchart/adapters/memory'
import { can, organizations } from 'authchart/organizations'
import Credentials from 'authchart/providers/credentials'

export const adapter = MemoryAdapter() // or PostgresAdapter(pool): `migrate()` creates the tables

// Your own user check goes here (see the credentials example above): this one is a demo.
const demoPassword = process.env.DEMO_PASSWORD
async function checkUser(username: unknown, password: unknown) {
  const user = await adapter.getUserByEmail(`${String(username)}@example.com`)
  return user && demoPassword !== undefined && password === demoPassword ? user : null
}

export const config = {
  secret: process.env.AUTH_SECRET,
  trustHost: true,
  adapter,
  session: { strategy: 'jwt' }, // database sessions work alike
  providers: [
    Credentials({
      credentials: { username: {}, password: { type: 'password' } },
      authorize: ({ username, password }) => checkUser(username, password),
    }),
  ],
  // Owner, admin and member are built in; a custom role is data: { resource: actions[] }.
  organizations: organizations({ roles: { billing: { invoice: ['read', 'pay'] } } }),
} satisfies AuthConfig

// An application route: the membership is read from the adapter on every call.
export async function payInvoice(request: Request): Promise<Response> {
  if (!(await can(request, 'invoice:pay', config))) return new Response(null, { status: 403 })
  return new Response('paid')
}
