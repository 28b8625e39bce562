import { signOut } from '../../hooks.server'

export const actions = { default: signOut }
