import type { Series } from '../../console/traffic.ts';
import { escapeHtml as h } from '../mail-pages.ts';

/**
 * Bar charts as inline SVG, drawn on the server: no script, no font or image to load, nothing the
 * Content-Security-Policy must open. The plot stretches to the card's width (preserveAspectRatio
 * none, strokes that do not scale); its labels are HTML around it, so they stay legible at any width.
 */

/** Colours of the stacked series, in order; the last stands for "other". */
const palette = ['#1a56db', '#2da44e', '#bf8700', '#8250df', '#0598bc', '#e16f24'];
const otherColour = '#8c959f';
const lineColour = '#cf222e';
/** Series drawn apart before the rest are summed as "other". */
const maxStacked = palette.length;

export interface ChartInput {
  id: string;
  title: string;
  /** What one unit counts, for the tooltips and the summary ("requests", "devices"). */
  unit: string;
  series: Series[];
  /** Fixed colours for labels that mean something (a login's outcome), else the palette's in order. */
  colours?: Record<string, string>;
  /** A line over the bars (lockouts over logins, failures over pushes), not stacked. */
  line?: { label: string; values: number[] };
  start: number;
  stepMs: number;
  bars: number;
}

const number = new Intl.NumberFormat('en', { maximumFractionDigits: 1 });
const compact = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });

/** Time of a bar as the axis shows it: the hour for windows within a day, the date beyond. */
function when(ms: number, stepMs: number): string {
  const iso = new Date(ms).toISOString();
  if (stepMs >= 86_400_000) return iso.slice(5, 10);
  if (stepMs >= 3_600_000) return `${iso.slice(5, 10)} ${iso.slice(11, 13)}h`;
  return iso.slice(11, 16);
}

/** The series drawn: the largest ones, and the rest summed as "other". */
function stacked(series: Series[], bars: number, colours: Record<string, string> = {}): Array<Series & { colour: string }> {
  const shown = series.slice(0, series.length > maxStacked ? maxStacked - 1 : maxStacked).map((s, i) => ({ ...s, colour: colours[s.label] ?? palette[i] }));
  const rest = series.slice(shown.length);
  if (rest.length > 0) {
    const values = new Array<number>(bars).fill(0);
    for (const s of rest) s.values.forEach((v, i) => (values[i] += v));
    shown.push({ label: `other (${rest.length})`, values, total: rest.reduce((sum, s) => sum + s.total, 0), colour: otherColour });
  }
  return shown;
}

/** A round top for the axis: 1, 2 or 5 times a power of ten, at least the largest bar. */
function axisTop(max: number): number {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((m) => m * power).find((top) => top >= max)!;
}

function swatch(colour: string, line = false): string {
  const shape = line ? `<rect y="5" width="12" height="3" fill="${colour}"/>` : `<rect width="12" height="12" rx="2" fill="${colour}"/>`;
  return `<svg class="swatch" width="12" height="12" viewBox="0 0 12 12" aria-hidden="true">${shape}</svg>`;
}

export function barChart(input: ChartInput): string {
  const { bars, stepMs, start } = input;
  const drawn = stacked(input.series, bars, input.colours);
  const totals = Array.from({ length: bars }, (_, i) => drawn.reduce((sum, s) => sum + s.values[i], 0));
  const lineMax = input.line ? Math.max(0, ...input.line.values) : 0;
  const top = axisTop(Math.max(lineMax, ...totals));
  const y = (v: number) => 100 - (v / top) * 100;
  const all = totals.reduce((a, b) => a + b, 0);
  const peak = totals.indexOf(Math.max(...totals));
  const columns = totals.map((total, i) => {
    let base = 0;
    const rects = drawn
      .filter((s) => s.values[i] > 0)
      .map((s) => {
        const height = (s.values[i] / top) * 100;
        base += height;
        return `<rect x="${i + 0.1}" y="${(100 - base).toFixed(3)}" width="0.8" height="${height.toFixed(3)}" fill="${s.colour}"/>`;
      })
      .join('');
    const parts = drawn.filter((s) => s.values[i] > 0).map((s) => `\n${s.label}: ${number.format(s.values[i])}`).join('');
    const extra = input.line && input.line.values[i] > 0 ? `\n${input.line.label}: ${number.format(input.line.values[i])}` : '';
    return `<g><title>${h(`${when(start + i * stepMs, stepMs)}: ${number.format(total)} ${input.unit}${parts}${extra}`)}</title>` +
      `<rect x="${i}" y="0" width="1" height="100" fill="transparent"/>${rects}</g>`;
  }).join('');
  const line = input.line && lineMax > 0
    ? `<polyline fill="none" stroke="${lineColour}" stroke-width="2" vector-effect="non-scaling-stroke" points="${input.line.values.map((v, i) => `${i + 0.5},${y(v).toFixed(3)}`).join(' ')}"/>`
    : '';
  const grid = [0, 50, 100].map((at) => `<line x1="0" x2="${bars}" y1="${at}" y2="${at}" stroke="#d0d7de" stroke-width="1" vector-effect="non-scaling-stroke"/>`).join('');
  const summary = all === 0
    ? `${input.title}: nothing counted in this window.`
    : `${input.title}: ${number.format(all)} ${input.unit} in all, at most ${number.format(totals[peak])} at ${when(start + peak * stepMs, stepMs)}.`;
  const ticks = [0, Math.round(bars / 3), Math.round((2 * bars) / 3)].map((i) => `<span>${when(start + i * stepMs, stepMs)}</span>`).join('') + '<span>now</span>';
  const legend = drawn.map((s) => `<li>${swatch(s.colour)}<span class="label">${h(s.label)}</span> <b>${number.format(s.total)}</b></li>`);
  if (input.line) legend.push(`<li>${swatch(lineColour, true)}<span class="label">${h(input.line.label)}</span> <b>${number.format(input.line.values.reduce((a, b) => a + b, 0))}</b></li>`);
  return `<figure class="chart" id="${input.id}">
<figcaption><h2>${h(input.title)}</h2></figcaption>
<div class="plot"><div class="yaxis" aria-hidden="true"><span>${compact.format(top)}</span><span>${compact.format(top / 2)}</span><span>0</span></div>
<svg viewBox="0 0 ${bars} 100" preserveAspectRatio="none" role="img" aria-label="${h(summary)}">${grid}${columns}${line}</svg></div>
<div class="xaxis" aria-hidden="true">${ticks}</div>
${all === 0 && !lineMax ? '<p class="muted">Nothing counted in this window.</p>' : `<ul class="legend">${legend.join('')}</ul>`}
</figure>`;
}

export const chartStyle = `
.charts{display:grid;grid-template-columns:1fr 1fr;gap:1.5rem}
figure.chart{margin:0;min-width:0}
figure.chart h2{font-size:1rem;margin:0 0 .5rem}
.plot{display:grid;grid-template-columns:auto 1fr;grid-template-rows:11rem;gap:.4rem}
.plot svg{width:100%;height:11rem;display:block}
.yaxis{display:flex;flex-direction:column;justify-content:space-between;font-size:.75rem;color:#57606a;text-align:right;font-variant-numeric:tabular-nums;margin:-.45rem 0}
.xaxis{display:flex;justify-content:space-between;font-size:.75rem;color:#57606a;margin:.25rem 0 0 2rem;font-variant-numeric:tabular-nums}
ul.legend{list-style:none;margin:.6rem 0 0;padding:0;font-size:.85rem;display:grid;gap:.15rem}
ul.legend li{display:flex;align-items:center;gap:.4rem;min-width:0}
ul.legend .label{overflow:hidden;text-overflow:ellipsis;white-space:nowrap;min-width:0;flex:1}
ul.legend b{font-variant-numeric:tabular-nums;font-weight:600}
.swatch{flex:none}
nav.ranges{display:flex;flex-wrap:wrap;gap:.25rem .5rem;margin:0 0 1rem}
nav.ranges a{padding:.2rem .6rem;border:1px solid #d0d7de;border-radius:1rem;text-decoration:none}
nav.ranges a[aria-current=page]{background:#1f2328;color:#fff;border-color:#1f2328}
@media (max-width:52rem){.charts{grid-template-columns:1fr}}
`;
