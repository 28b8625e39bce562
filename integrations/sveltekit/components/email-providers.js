// The ids of the built-in providers whose type is 'email' (a test derives this list from the
// providers' types, so a new e-mail provider cannot be missing here).
export const EMAIL_PROVIDER_IDS = ['email', 'forwardemail', 'mailgun', 'nodemailer', 'postmark', 'resend', 'sendgrid']
