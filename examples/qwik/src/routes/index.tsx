import { component$ } from '@builder.io/qwik'
import { Form } from '@builder.io/qwik-city'
import { useSession, useSignOut } from './plugin@auth'

export default component$(() => {
  const session = useSession()
  const signOut = useSignOut()
  if (!session.value?.user) return <p id="who">Not signed in</p>
  return (
    <>
      <p id="who">Signed in as {session.value.user.name}</p>
      <Form action={signOut}>
        <input type="hidden" name="redirectTo" value="/" />
        <button id="signout">Sign out</button>
      </Form>
    </>
  )
})
