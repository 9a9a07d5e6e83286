import type { FastifyReply } from 'fastify';
import { overviewRanges, type Overview, type OverviewRange, type Series } from '../../console/traffic.ts';
import { barChart } from './charts.ts';
import { banner, document, send, type PageSession } from './pages.ts';

const number = new Intl.NumberFormat('en');

function sum(series: Series[]): number {
  return series.reduce((total, s) => total + s.total, 0);
}

/** The overview: the window's totals, then a chart each for requests, errors, logins and pushes. */
export function overviewPage(reply: FastifyReply, session: PageSession, overview: Overview): FastifyReply {
  const { series, start, stepMs, bars } = overview;
  const frame = { start, stepMs, bars };
  const total = (values: Series[]) => new Array<number>(bars).fill(0).map((_, i) => values.reduce((s, line) => s + line.values[i], 0));
  const ranges = (Object.keys(overviewRanges) as OverviewRange[])
    .map((range) => `<a href="/console/overview?range=${range}"${range === overview.range ? ' aria-current="page"' : ''}>${overviewRanges[range].text}</a>`)
    .join('');
  const requests = sum(series.request);
  const errors = sum(series.error);
  const errorShare = requests > 0 ? ` (${((errors / requests) * 100).toFixed(1)}%)` : '';
  const logins = series.login.find((s) => s.label === 'success')?.total ?? 0;
  const failed = sum(series.login) - logins;
  const stat = (label: string, value: string) => `<li><strong>${value}</strong>${label}</li>`;
  const main = `<div class="card"><h1>Overview</h1>
<nav class="ranges" aria-label="Window">${ranges}</nav>
<ul class="stats">${stat('requests', number.format(requests))}${stat(`errors${errorShare}`, number.format(errors))}${stat('logins', number.format(logins))}${stat('failed or refused logins', number.format(failed))}${stat('lockouts', number.format(sum(series.lockout)))}${stat('devices pushed', number.format(sum(series.push)))}</ul>
<p class="muted">Counted by every node on this database, in buckets of one minute (kept a day) and one hour (kept a month); a node adds its counts every few seconds. Times are UTC; hover a bar for its numbers.</p>
<div class="charts">
${barChart({ id: 'requests', title: 'Requests by route', unit: 'requests', series: series.request, ...frame })}
${barChart({ id: 'errors', title: 'Errors by route (status 400 and above)', unit: 'errors', series: series.error, ...frame })}
${barChart({ id: 'logins', title: 'Logins and lockouts', unit: 'logins', series: series.login, colours: { success: '#2da44e', failure: '#bf8700', locked: '#8250df' }, line: { label: 'lockouts', values: total(series.lockout) }, ...frame })}
${barChart({ id: 'pushes', title: 'Devices pushed by route', unit: 'devices', series: series.push, line: { label: 'failed or invalid', values: total(series.pushFailed) }, ...frame })}
</div></div>`;
  return send(reply, 200, document('Overview', banner(session, 'overview'), main));
}
