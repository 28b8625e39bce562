import { auth } from '../../auth'

// proxy.ts sends visitors without a session to /login first.
export default async function Protected() {
  const session = await auth()
  return <p id="secret">{`Hello ${session?.user?.name}, this page is protected.`}</p>
}
