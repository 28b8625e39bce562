import { component$ } from '@builder.io/qwik'
import { Form, useLocation } from '@builder.io/qwik-city'
import { useSignIn } from '../plugin@auth'

export default component$(() => {
  const signIn = useSignIn()
  const location = useLocation()
  const redirectTo = location.url.searchParams.get('callbackUrl') ?? '/'
  const error = location.url.searchParams.get('error')
  return (
    <>
      {error && <p id="error">Sign-in failed: {error}</p>}
      <Form action={signIn}>
        <input type="hidden" name="providerId" value="credentials" />
        <input type="hidden" name="options.redirectTo" value={redirectTo} />
        <input name="options.username" placeholder="Username" />
        <input name="options.password" type="password" placeholder="Password" />
        <button id="signin">Sign in</button>
      </Form>
      <Form action={signIn}>
        <input type="hidden" name="providerId" value="op" />
        <input type="hidden" name="options.redirectTo" value={redirectTo} />
        <button id="signin-op">Sign in with Test OP</button>
      </Form>
      {signIn.value?.failed && (
        <p id="invalid">{JSON.stringify({ fieldErrors: signIn.value.fieldErrors, formErrors: signIn.value.formErrors })}</p>
      )}
    </>
  )
})
