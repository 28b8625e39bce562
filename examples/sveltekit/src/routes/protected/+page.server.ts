import { redirect } from '@sveltejs/kit'
import type { PageServerLoad } from './$types'

// Checked per page, in its own load function: a layout's load does not rerun for every page it wraps.
export const load: PageServerLoad = async (event) => {
  const session = await event.locals.auth()
  if (!session?.user) redirect(303, `/login?callbackUrl=${encodeURIComponent(event.url.pathname)}`)
  return { name: session.user.name }
}
