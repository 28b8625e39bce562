import { requireRecentAuth } from 'authchart/sveltekit'
import type { Actions, PageServerLoad } from './$types'

// A sensitive page asks for a recent proof (a factor proven in the last 10 minutes): a stale
// session is sent to confirm it's them and comes back here; an enhanced form's fetch gets 401
// with the URL to open.
export const load: PageServerLoad = async (event) => {
  const { verifiedAt } = await requireRecentAuth(event, { maxAge: 600 })
  const session = await event.locals.auth()
  return { name: session?.user?.name ?? '', verifiedAt }
}

export const actions: Actions = {
  default: async (event) => {
    await requireRecentAuth(event, { maxAge: 600 })
    return { saved: true }
  },
}
