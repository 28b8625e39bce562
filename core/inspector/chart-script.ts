/**
 * Pan and zoom for the inspector's charts: a small inline script (no library, nothing fetched) that
 * moves each chart's SVG `viewBox`. A chart starts fitted to the page width; drag pans, the
 * buttons, Ctrl/⌘ + wheel (and pinch), double-click and the `+` `-` `0` keys zoom, `0` and "fit"
 * return to the full width. The page's Content-Security-Policy allows exactly this script, by hash.
 *
 * @module
 */

/** The script, run once at the end of the inspector page. */
export const CHART_SCRIPT = `(() => {
  const MIN_SHARE = 0.02
  for (const chart of document.querySelectorAll('[data-chart]')) {
    const svg = chart.querySelector('svg')
    if (!svg || !svg.getAttribute('viewBox')) continue
    const [x, y, w, h] = svg.getAttribute('viewBox').trim().split(/[\\s,]+/).map(Number)
    const full = { x, y, w, h }
    let view = { ...full }
    svg.removeAttribute('width')
    svg.removeAttribute('height')
    const apply = () => {
      svg.setAttribute('viewBox', [view.x, view.y, view.w, view.h].join(' '))
      chart.dataset.zoom = (full.w / view.w).toFixed(3)
    }
    const clamp = () => {
      view.x = Math.min(Math.max(view.x, full.x - view.w / 2), full.x + full.w - view.w / 2)
      view.y = Math.min(Math.max(view.y, full.y - view.h / 2), full.y + full.h - view.h / 2)
    }
    /** The chart point under client coordinates (cx, cy). */
    const pointAt = (cx, cy) => {
      const r = svg.getBoundingClientRect()
      return { x: view.x + ((cx - r.left) / r.width) * view.w, y: view.y + ((cy - r.top) / r.height) * view.h }
    }
    /** Zooms by factor (> 1 closer) keeping the chart point under (cx, cy) in place. */
    const zoom = (factor, cx, cy) => {
      const r = svg.getBoundingClientRect()
      const p = pointAt(cx ?? r.left + r.width / 2, cy ?? r.top + r.height / 2)
      const w = Math.min(full.w, Math.max(full.w * MIN_SHARE, view.w / factor))
      const scale = w / view.w
      view = { x: p.x - (p.x - view.x) * scale, y: p.y - (p.y - view.y) * scale, w, h: view.h * scale }
      clamp()
      apply()
    }
    const fit = () => {
      view = { ...full }
      apply()
    }
    chart.querySelector('[data-zoom="in"]')?.addEventListener('click', () => zoom(1.5))
    chart.querySelector('[data-zoom="out"]')?.addEventListener('click', () => zoom(1 / 1.5))
    chart.querySelector('[data-zoom="fit"]')?.addEventListener('click', fit)
    svg.addEventListener('wheel', (event) => {
      if (!event.ctrlKey && !event.metaKey) return
      event.preventDefault()
      zoom(Math.exp(-event.deltaY / 300), event.clientX, event.clientY)
    }, { passive: false })
    svg.addEventListener('dblclick', (event) => zoom(2, event.clientX, event.clientY))
    chart.addEventListener('keydown', (event) => {
      if (event.key === '+' || event.key === '=') zoom(1.5)
      else if (event.key === '-') zoom(1 / 1.5)
      else if (event.key === '0') fit()
      else return
      event.preventDefault()
    })
    let drag = null
    svg.addEventListener('pointerdown', (event) => {
      if (event.button !== 0) return
      drag = { cx: event.clientX, cy: event.clientY, x: view.x, y: view.y }
      svg.setPointerCapture(event.pointerId)
      chart.classList.add('dragging')
    })
    svg.addEventListener('pointermove', (event) => {
      if (!drag) return
      const r = svg.getBoundingClientRect()
      view.x = drag.x - ((event.clientX - drag.cx) / r.width) * view.w
      view.y = drag.y - ((event.clientY - drag.cy) / r.height) * view.h
      clamp()
      apply()
    })
    const stop = () => {
      drag = null
      chart.classList.remove('dragging')
    }
    svg.addEventListener('pointerup', stop)
    svg.addEventListener('pointercancel', stop)
    apply()
  }
})()`

/**
 * The page's own script: one chart at a time, chosen from the list (and kept in the URL's
 * `#flow-<id>`, so a reload or a link shows the same chart), and the traces filtered by flow and
 * outcome. Without scripts every chart and trace shows, one after the other.
 */
export const PAGE_SCRIPT = `(() => {
  const sections = [...document.querySelectorAll('section.flow')]
  const choice = document.querySelector('[data-chart-choice]')
  const show = (id) => {
    const chosen = sections.find((section) => section.dataset.flow === id) ?? sections[0]
    if (!chosen) return
    for (const section of sections) section.hidden = section !== chosen
    if (choice) choice.value = chosen.dataset.flow
  }
  const fromHash = () => show(decodeURIComponent(location.hash.replace(/^#flow-/, '')))
  choice?.addEventListener('change', () => {
    history.replaceState(null, '', '#flow-' + encodeURIComponent(choice.value))
    show(choice.value)
  })
  addEventListener('hashchange', fromHash)
  fromHash()
  const filters = [...document.querySelectorAll('[data-trace-filter]')]
  const count = document.querySelector('[data-trace-count]')
  const rows = [...document.querySelectorAll('tr.trace')]
  const filter = () => {
    let shown = 0
    for (const row of rows) {
      row.hidden = !filters.every((select) => !select.value || row.dataset[select.dataset.traceFilter] === select.value)
      if (!row.hidden) shown++
    }
    if (count) count.textContent = shown + ' of ' + rows.length + ' shown'
  }
  for (const select of filters) select.addEventListener('change', filter)
  filter()
})()`

const hashes = new Map<string, Promise<string>>()

/** `script`'s CSP source (`'sha256-…'`), computed once per script. */
function scriptSource(script: string): Promise<string> {
  let hash = hashes.get(script)
  if (!hash) {
    hash = crypto.subtle.digest('SHA-256', new TextEncoder().encode(script)).then((digest) => {
      let binary = ''
      for (const byte of new Uint8Array(digest)) binary += String.fromCharCode(byte)
      return `'sha256-${btoa(binary)}'`
    })
    hashes.set(script, hash)
  }
  return hash
}

/** The chart script's CSP source (`'sha256-…'`), computed once. */
export const chartScriptSource = (): Promise<string> => scriptSource(CHART_SCRIPT)

/** The page script's CSP source, computed once. */
export const pageScriptSource = (): Promise<string> => scriptSource(PAGE_SCRIPT)

/** The controls above a chart. */
export const CHART_CONTROLS =
  '<div class="controls"><button type="button" data-zoom="out" title="Zoom out (−)">−</button>' +
  '<button type="button" data-zoom="in" title="Zoom in (+)">+</button>' +
  '<button type="button" data-zoom="fit" title="Fit to width (0)">fit width</button>' +
  '<span>drag to pan · Ctrl/⌘ + wheel or double-click to zoom</span></div>'

/** The chart styles: the SVG spans the page width and keeps its aspect ratio. */
export const CHART_STYLES =
  '.chart{position:relative;overflow:hidden;border:1px solid #ddd;border-radius:.5rem;background:#fff;touch-action:none}' +
  '.chart:focus-visible{outline:2px solid #346df1}.chart svg{display:block;width:100%;height:auto;cursor:grab;user-select:none}' +
  '.chart.dragging svg{cursor:grabbing}.controls{display:flex;gap:.25rem;align-items:center;padding:.25rem .5rem;border-bottom:1px solid #eee;font-size:12px;color:#666}' +
  '.controls button{font:inherit;min-width:2rem;padding:.1rem .5rem;border:1px solid #ccc;border-radius:.25rem;background:#fafafa;cursor:pointer}'
