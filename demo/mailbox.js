// The demo's mailbox: an SMTP server inside the demo (npm `smtp-server`) that keeps the last
// messages it received, so e-mail sign-in works offline. Development only: anyone who can open
// /dev/mailbox can read every sign-in link, which is the point of a demo and nothing else.
import { simpleParser } from 'mailparser'
import { SMTPServer } from 'smtp-server'

const KEPT = 50

const escapeHtml = (text) => String(text ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** Starts the SMTP server on a free loopback port; `render()` draws the received messages. */
export async function createMailbox() {
  const messages = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream).then(
        (mail) => {
          messages.unshift({
            to: mail.to?.text ?? '',
            subject: mail.subject ?? '',
            date: mail.date ?? new Date(),
            text: mail.text ?? '',
          })
          messages.length = Math.min(messages.length, KEPT)
          callback()
        },
        (error) => callback(error),
      )
    },
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.server.address()
  return {
    smtpUrl: `smtp://127.0.0.1:${port}`,
    messages,
    render() {
      const items = messages.map((m) => {
        const link = /^(https?:\/\/\S+)$/m.exec(m.text)?.[1]
        const code = /code on the sign-in page: (\S+)/.exec(m.text)?.[1]
        return `<li class="message"><p><strong>${escapeHtml(m.subject)}</strong> to <span class="to">${escapeHtml(m.to)}</span>, ${escapeHtml(m.date.toISOString())}</p>
${link ? `<p><a class="link" href="${escapeHtml(link)}">Open the link</a></p>` : ''}
${code ? `<p>One-time code: <code class="code">${escapeHtml(code)}</code></p>` : ''}</li>`
      })
      return `<h1>Development mailbox</h1><p>Messages the demo "sent" through its own SMTP server, newest first. <a href="/">Home</a></p>
<ul id="messages">${items.join('') || '<li>No messages yet.</li>'}</ul>`
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}
