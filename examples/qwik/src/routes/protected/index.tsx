import { component$ } from '@builder.io/qwik'
import type { RequestHandler } from '@builder.io/qwik-city'
import type { Session } from 'authchart'
import { useSession } from '../plugin@auth'

// The auth plugin's onRequest has stored the session by the time this runs.
export const onRequest: RequestHandler = (ev) => {
  const session = ev.sharedMap.get('session') as Session | null
  if (!session?.user) throw ev.redirect(302, `/login?callbackUrl=${encodeURIComponent(ev.url.pathname)}`)
}

export default component$(() => {
  const session = useSession()
  return <p id="secret">Hello {session.value?.user?.name}, this page is protected.</p>
})
