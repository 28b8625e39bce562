import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineConfig, type DefaultTheme } from 'vitepress'

const docs = fileURLToPath(new URL('..', import.meta.url))

/** The pages `npm run docs` generated under `folder` (flows, providers, reference), as sidebar links. */
function generated(folder: string): DefaultTheme.SidebarItem[] {
  const dir = join(docs, folder)
  if (!existsSync(dir)) return []
  const items: DefaultTheme.SidebarItem[] = []
  const walk = (sub: string) => {
    for (const name of readdirSync(join(dir, sub)).sort()) {
      const path = join(sub, name)
      if (statSync(join(dir, path)).isDirectory()) walk(path)
      else if (name.endsWith('.md') && path !== 'index.md') {
        const link = `/${folder}/${path.replace(/\.md$/, '').replace(/\/index$/, '/')}`
        const title = /^# (.+)$/m.exec(readFileSync(join(dir, path), 'utf8'))?.[1]?.replace(/^Flow: /, '')
        items.push({ text: title ?? path.replace(/\.md$/, ''), link })
      }
    }
  }
  walk('')
  return items
}

export default defineConfig({
  title: 'authchart',
  description: 'Authentication for the web platform as explicit statecharts, drop-in for Auth.js.',
  lang: 'en',
  cleanUrls: false,
  srcExclude: ['**/README.md'],
  // The site is checked, not shipped minified: an unminified build takes half the time on 2 cores.
  markdown: { theme: { light: 'github-light-high-contrast', dark: 'github-dark-high-contrast' } },
  vite: { build: { minify: false, chunkSizeWarningLimit: 4096 } },
  themeConfig: {
    search: {
      provider: 'local',
      options: {
        // A reference page is found by its title and the names of its exports (its headings); its
        // full text would double the time the index takes to build.
        _render(src, env, md) {
          if (!env.relativePath.startsWith('reference/')) return md.render(src, env)
          return md.render(src.split('\n').filter((line) => /^#{1,3} /.test(line)).join('\n\n'), env)
        },
      },
    },
    nav: [
      { text: 'Get started', link: '/getting-started/nextjs' },
      { text: 'Concepts', link: '/concepts/' },
      { text: 'Flows', link: '/flows/' },
      { text: 'Providers', link: '/providers/' },
      { text: 'Guides', link: '/guides/' },
      { text: 'Reference', link: '/reference/' },
    ],
    sidebar: {
      '/reference/': [{ text: 'API reference', link: '/reference/', items: generated('reference') }],
      '/providers/': [{ text: 'Providers', link: '/providers/', items: generated('providers') }],
      '/': [
        {
          text: 'Getting started',
          items: [
            { text: 'Next.js', link: '/getting-started/nextjs' },
            { text: 'Hono', link: '/getting-started/hono' },
            { text: 'SvelteKit', link: '/getting-started/sveltekit' },
            { text: 'Qwik City', link: '/getting-started/qwik' },
            { text: 'Express', link: '/getting-started/express' },
            { text: 'Fastify', link: '/getting-started/fastify' },
            { text: 'Plain Request', link: '/getting-started/request' },
          ],
        },
        {
          text: 'Concepts',
          link: '/concepts/',
          items: [
            { text: 'Flows as charts', link: '/concepts/flows-as-charts' },
            { text: 'Sealed flow state', link: '/concepts/sealed-flow-state' },
            { text: 'The session authority', link: '/concepts/session-authority' },
            { text: 'Completion and second factor', link: '/concepts/completion' },
            { text: 'Step-up', link: '/concepts/step-up' },
            { text: 'Extensions', link: '/concepts/extensions' },
            { text: 'Outages and upgrades', link: '/concepts/outages' },
            { text: 'Optional features are imports', link: '/concepts/optional-features' },
            { text: 'How it is built', link: '/concepts/architecture' },
          ],
        },
        { text: 'Flows', link: '/flows/', items: generated('flows') },
        {
          text: 'Guides',
          link: '/guides/',
          items: [
            { text: 'OAuth and OpenID Connect', link: '/guides/oauth' },
            { text: 'Refresh-token rotation', link: '/guides/refresh-tokens' },
            { text: 'Provider catalogue', link: '/guides/provider-catalogue' },
            { text: 'E-mail', link: '/guides/email' },
            { text: 'Databases', link: '/guides/databases' },
            { text: 'Passkeys', link: '/guides/passkeys' },
            { text: 'Passwords', link: '/guides/passwords' },
            { text: 'Organizations', link: '/guides/organizations' },
            { text: 'API keys', link: '/guides/api-keys' },
            { text: 'Service accounts', link: '/guides/service-accounts' },
            { text: 'Device authorization', link: '/guides/device-authorization' },
            { text: 'Testing with authchart/testing', link: '/guides/testing' },
            { text: 'Writing an extension', link: '/guides/extensions' },
            { text: 'Edge runtimes', link: '/guides/edge' },
            { text: 'Several instances', link: '/guides/instances' },
            { text: 'Logout by the provider', link: '/guides/provider-logout' },
            { text: 'Audit trail to a SIEM', link: '/guides/audit' },
            { text: 'Telemetry', link: '/guides/telemetry' },
          ],
        },
        {
          text: 'Adapters and stores',
          link: '/adapters/',
          items: [
            { text: 'Memory', link: '/adapters/memory' },
            { text: 'PostgreSQL (pg, PGlite)', link: '/adapters/postgres' },
            { text: 'Auth.js adapters', link: '/adapters/authjs' },
            { text: 'Stores: memory, Redis, PostgreSQL', link: '/adapters/stores' },
          ],
        },
        {
          text: 'Migration',
          link: '/migration/',
          items: [
            { text: 'From next-auth v5', link: '/migration/next-auth' },
            { text: 'From better-auth', link: '/migration/better-auth' },
          ],
        },
        { text: 'Benchmarks', link: '/benchmarks' },
        { text: 'Changelog and versioning', link: '/changelog' },
        { text: 'Contributing', link: '/contributing' },
        { text: 'Providers', link: '/providers/' },
        { text: 'API reference', link: '/reference/' },
      ],
    },
  },
})
