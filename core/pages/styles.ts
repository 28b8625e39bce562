/**
 * The stylesheet of the built-in pages: a centred card, light and dark schemes, and the two theme
 * variables `--brand-color` and `--button-text-color`.
 *
 * @module
 */
export const css = `:root{--brand-color:#346df1;--button-text-color:#fff;--radius:.5rem}
.__next-auth-theme-light,.__next-auth-theme-auto{--fg:#18181b;--muted:#52525b;--bg:#f4f4f5;--card:#fff;--line:#d4d4d8;--input:#fff}
.__next-auth-theme-dark{--fg:#f4f4f5;--muted:#a1a1aa;--bg:#18181b;--card:#27272a;--line:#3f3f46;--input:#18181b}
@media (prefers-color-scheme:dark){.__next-auth-theme-auto{--fg:#f4f4f5;--muted:#a1a1aa;--bg:#18181b;--card:#27272a;--line:#3f3f46;--input:#18181b}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
.page{min-height:100vh;display:grid;grid-template-columns:minmax(0,1fr);place-items:center;padding:1rem}
.card{width:22rem;max-width:100%;overflow-wrap:anywhere;background:var(--card);border:1px solid var(--line);border-radius:var(--radius);padding:1.5rem}
h1{font-size:1.25rem;margin:0 0 1rem}
p{margin:.5rem 0}
.logo{display:block;max-width:10rem;max-height:4rem;margin:0 auto 1rem}
.provider+.provider{margin-top:.75rem}
form{display:grid;gap:.5rem}
label{font-size:.875rem;color:var(--muted)}
input{width:100%;padding:.6rem .75rem;border:1px solid var(--line);border-radius:var(--radius);background:var(--input);color:var(--fg);font:inherit}
button,.button{display:flex;gap:.5rem;align-items:center;justify-content:center;width:100%;padding:.65rem 1rem;border:0;border-radius:var(--radius);background:var(--provider-brand-color,var(--brand-color));color:var(--button-text-color);font:inherit;font-weight:600;cursor:pointer;text-decoration:none}
button:focus-visible,input:focus-visible,a:focus-visible{outline:2px solid var(--brand-color);outline-offset:2px}
hr{border:0;border-top:1px solid var(--line);margin:1rem 0}
.card .error{background:#fee2e2;color:#991b1b;border-radius:var(--radius);padding:.5rem .75rem;margin-bottom:1rem}
button.secondary,.button.secondary{background:transparent;color:var(--brand-color);border:1px solid var(--line)}
form+form{margin-top:.5rem}
.site{color:var(--brand-color)}
.message{margin-bottom:1rem}
[hidden]{display:none!important}
.webauthn-status{margin:0;font-size:.875rem;color:var(--muted)}
.webauthn-status:empty{display:none}
.muted{color:var(--muted);font-size:.875rem}
.notice{background:#dcfce7;color:#166534;border-radius:var(--radius);padding:.5rem .75rem}
.sessions{list-style:none;margin:1rem 0;padding:0}
.session{border-top:1px solid var(--line);padding:.5rem 0}
.session:last-child{border-bottom:1px solid var(--line)}
.back{margin:1rem 0 0;text-align:center;font-size:.875rem}
.back a{color:var(--brand-color)}
.badge{font-size:.75rem;font-weight:600;color:var(--brand-color);border:1px solid var(--brand-color);border-radius:1rem;padding:0 .5rem;margin-left:.25rem;white-space:nowrap}`
