'use client'
import { useState } from 'react'
import { signIn, signOut, useSession } from 'authchart/next/react'

// The client hooks: useSession() and the browser-side signIn/signOut.
export default function ClientPage() {
  const { data: session, status, update } = useSession()
  const [outcome, setOutcome] = useState('')
  return (
    <main>
      <p id="status">{status}</p>
      <p id="client-who">{session?.user?.name ?? 'nobody'}</p>
      <p id="outcome">{outcome}</p>
      <button
        id="client-signin"
        onClick={() => signIn('credentials', { username: 'alice', password: 'wonderland', redirect: false }).then((r) => setOutcome(r.ok ? 'signed in' : `${r.error}`))}
      >
        Sign in
      </button>
      <button
        id="client-wrong"
        onClick={() => signIn('credentials', { username: 'alice', password: 'nope', redirect: false }).then((r) => setOutcome(`${r.error}:${r.code}`))}
      >
        Wrong password
      </button>
      <button id="client-update" onClick={() => update({ name: 'Alice (renamed in the browser)' })}>
        Rename
      </button>
      <button id="client-signout" onClick={() => signOut({ redirectTo: '/' })}>
        Sign out
      </button>
    </main>
  )
}
