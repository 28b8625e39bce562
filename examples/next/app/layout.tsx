import type { ReactNode } from 'react'
import { SessionProvider } from 'authchart/next/react'

export const metadata = { title: 'authchart on Next.js' }

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <SessionProvider>{children}</SessionProvider>
      </body>
    </html>
  )
}
