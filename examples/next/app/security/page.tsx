import { auth, requireRecentAuth } from '../../auth'

// proxy.ts asks first; the page asks again itself (a server component names the path to come back to).
export default async function Security() {
  const { verifiedAt } = await requireRecentAuth({ returnTo: '/security', maxAge: 600 })
  const session = await auth()
  return (
    <main>
      <h1>{`Security settings of ${session?.user?.name}`}</h1>
      <p id="verified-at">{`Confirmed at ${new Date(verifiedAt * 1000).toISOString()}`}</p>
    </main>
  )
}
