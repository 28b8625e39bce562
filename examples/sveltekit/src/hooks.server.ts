import { SvelteKitAuth } from 'authchart/sveltekit'
import { authConfig } from './auth'

export const { handle, signIn, signOut } = SvelteKitAuth(authConfig)
