import adapter from '@sveltejs/adapter-node'

/** @type {import('@sveltejs/kit').Config} */
export default {
  kit: {
    adapter: adapter(),
    // A partner site may post forms to this app; sign-in and sign-out still refuse its origin.
    csrf: { trustedOrigins: ['https://partner.example'] },
  },
}
