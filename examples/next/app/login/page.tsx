import { redirect } from 'next/navigation'
import { AuthError } from 'authchart/next'
import { signIn } from '../../auth'

type Search = Promise<{ callbackUrl?: string; error?: string; code?: string }>

// The sign-in page (pages.signIn): server actions sign in and redirect to callbackUrl.
export default async function Login({ searchParams }: { searchParams: Search }) {
  const { callbackUrl = '/', error } = await searchParams
  return (
    <main>
      {error && <p id="error">{`Sign-in failed: ${error}`}</p>}
      <form
        action={async (formData: FormData) => {
          'use server'
          try {
            await signIn('credentials', formData)
          } catch (error) {
            // Next's redirect is an error too: only Auth.js errors are handled here.
            if (error instanceof AuthError) redirect(`/login?error=${error.type}`)
            throw error
          }
        }}
      >
        <input type="hidden" name="redirectTo" value={callbackUrl} />
        <input name="username" placeholder="Username" />
        <input name="password" type="password" placeholder="Password" />
        <button id="signin">Sign in</button>
      </form>
      <form
        action={async () => {
          'use server'
          try {
            await signIn('op', { redirectTo: callbackUrl })
          } catch (error) {
            if (error instanceof AuthError) redirect(`/login?error=${error.type}`)
            throw error
          }
        }}
      >
        <button id="signin-op">Sign in with Test OP</button>
      </form>
    </main>
  )
}
