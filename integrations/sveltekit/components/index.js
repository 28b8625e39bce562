// The SignIn and SignOut components, compiled by the app's Svelte plugin (the `svelte` condition).
export { default as SignIn } from './SignIn.svelte'
export { default as SignOut } from './SignOut.svelte'
