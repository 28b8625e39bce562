import { auth } from '../../../auth'

// The wrapper: req.auth is the session (or null).
export const GET = auth((req) => {
  if (!req.auth) return Response.json({ message: 'Not signed in' }, { status: 401 })
  return Response.json({ name: req.auth.user?.name })
})
