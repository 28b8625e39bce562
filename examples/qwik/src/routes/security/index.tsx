import { component$ } from '@builder.io/qwik'
import { routeLoader$ } from '@builder.io/qwik-city'
import type { Session } from 'authchart'
import { requireRecentAuth } from 'authchart/qwik'

// A sensitive page asks for a recent proof (a factor proven in the last 10 minutes): a stale
// session is sent to confirm it's them and comes back here; a fetch gets 401 with the URL to open.
export const useSecurity = routeLoader$(async (ev) => {
  const { verifiedAt } = await requireRecentAuth(ev, { maxAge: 600 })
  const session = ev.sharedMap.get('session') as Session | null
  return { name: session?.user?.name ?? '', verifiedAt }
})

export default component$(() => {
  const security = useSecurity()
  return <p id="security">Security settings of {security.value.name}</p>
})
