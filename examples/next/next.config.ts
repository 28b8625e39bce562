import type { NextConfig } from 'next'

const nextConfig: NextConfig = {
  // The app is built inside another project's folder: its own folder is the root.
  turbopack: { root: import.meta.dirname },
  outputFileTracingRoot: import.meta.dirname,
}

export default nextConfig
