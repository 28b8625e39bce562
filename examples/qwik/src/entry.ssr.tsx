import { renderToStream, type RenderToStreamOptions } from '@builder.io/qwik/server'
import { manifest } from '@qwik-client-manifest'
import Root from './root'

export default function render(opts: RenderToStreamOptions) {
  return renderToStream(<Root />, { manifest, ...opts, containerAttributes: { lang: 'en', ...opts.containerAttributes } })
}
