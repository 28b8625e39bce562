import { auth, requireRecentAuth } from '../../../auth'

// Guarded by the server component alone (proxy.ts lets it through): Next's redirect() sends a
// stale session to confirm it's you, and back here afterwards.
export default async function RecentSecurity() {
  await requireRecentAuth({ returnTo: '/security/recent', maxAge: 600 })
  const session = await auth()
  return <h1>{`Security settings of ${session?.user?.name}`}</h1>
}
