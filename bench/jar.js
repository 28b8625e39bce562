// A minimal cookie jar for driving both libraries like a browser would.
export class Jar {
  cookies = new Map()

  /** Remembers the response's Set-Cookie headers (deletions included). */
  store(response) {
    for (const header of response.headers.getSetCookie()) {
      const [pair, ...attributes] = header.split(/;\s*/)
      const eq = pair.indexOf('=')
      const name = pair.slice(0, eq)
      const value = decodeURIComponent(pair.slice(eq + 1))
      const expired = attributes.some((a) => /^max-age=0$/i.test(a)) || value === ''
      if (expired) this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
    return response
  }

  header() {
    return [...this.cookies].map(([n, v]) => `${n}=${encodeURIComponent(v)}`).join('; ')
  }
}
