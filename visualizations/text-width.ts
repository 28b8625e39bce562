/**
 * Text widths for laying out diagram labels. Graphviz compiled to WebAssembly cannot read fonts, so
 * it guesses widths from built-in Times/Helvetica tables, and a browser that has no Helvetica draws
 * wider text that overflows its box. Labels are therefore sized here, from the advance widths of
 * DejaVu Sans (regular and bold), the face the SVG asks for first: it is the sans-serif most Linux
 * browsers fall back to and among the widest common ones (Verdana is close), so a box sized for it
 * also holds the text in Helvetica, Arial or Liberation Sans. The widths were measured in Chromium
 * (canvas `measureText` at 1000 px); `test/visualizations/svg.browser.test.ts` measures them again.
 *
 * @module
 */

/** The font list the diagrams ask for, the measured face first. */
export const DIAGRAM_FONT = 'DejaVu Sans, Verdana, Helvetica, Arial, sans-serif'

/** The characters with a measured width, in the order of the tables below. */
export const MEASURED_CHARACTERS = ' !"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~×→…—–’“”·é'

/** Advance widths of DejaVu Sans, in thousandths of an em. */
export const REGULAR_WIDTHS: readonly number[] = [
  318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337,
  636, 636, 636, 636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531,
  1000, 684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557, 863, 748, 787,
  603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390, 337, 390, 838, 500,
  500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612,
  635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838, 838,
  838, 1000, 1000, 500, 318, 518, 518, 318, 615,
]

/** Advance widths of DejaVu Sans Bold, in thousandths of an em. */
export const BOLD_WIDTHS: readonly number[] = [
  348, 456, 521, 838, 696, 1002, 872, 306, 457, 457, 523, 838, 380, 415, 380, 365,
  696, 696, 696, 696, 696, 696, 696, 696, 696, 696, 400, 400, 838, 838, 838, 580,
  1000, 774, 762, 734, 830, 683, 683, 821, 837, 372, 372, 775, 637, 995, 837, 850,
  733, 850, 770, 720, 682, 812, 774, 1103, 771, 724, 725, 457, 365, 457, 838, 500,
  500, 675, 716, 593, 716, 678, 435, 716, 712, 343, 343, 665, 343, 1042, 712, 687,
  716, 716, 493, 595, 478, 712, 652, 924, 645, 652, 582, 712, 365, 712, 838, 838,
  838, 1000, 1000, 500, 380, 657, 657, 380, 678,
]

/** Characters outside the table count as one em (as wide as the widest in it). */
const UNKNOWN_WIDTH = 1000

/** Room for faces a little wider than DejaVu Sans at some letters (Verdana). */
const SLACK = 1.08

const position = new Map([...MEASURED_CHARACTERS].map((c, i) => [c, i]))

/** The width of `text` at `size` points, in points, with room for slightly wider faces. */
export function textWidth(text: string, size: number, bold = false): number {
  const widths = bold ? BOLD_WIDTHS : REGULAR_WIDTHS
  let units = 0
  for (const c of text) {
    const i = position.get(c)
    units += i === undefined ? UNKNOWN_WIDTH : widths[i]!
  }
  return (units / 1000) * size * SLACK
}
