import { auth, signOut, unstable_update } from '../auth'

// A server component: auth() reads the session from the request's cookies.
export default async function Home() {
  const session = await auth()
  if (!session?.user) {
    return (
      <main>
        <p id="who">Not signed in</p>
        <a href="/protected">Protected page</a>
      </main>
    )
  }
  return (
    <main>
      <p id="who">{`Signed in as ${session.user.name}`}</p>
      <form
        action={async () => {
          'use server'
          await unstable_update({ user: { name: 'Alice (renamed on the server)' } })
        }}
      >
        <button id="rename">Rename on the server</button>
      </form>
      <form
        action={async () => {
          'use server'
          await signOut({ redirectTo: '/' })
        }}
      >
        <button id="signout">Sign out</button>
      </form>
    </main>
  )
}
