import { auth } from '../../../auth'

// auth() in a route handler.
export async function GET() {
  const session = await auth()
  return Response.json({ name: session?.user?.name ?? null })
}
