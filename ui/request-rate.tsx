/**
 * The dashboard's live request rate: sys/metrics is read every few seconds while the page is open
 * and the tab visible, and the growth of keywarden_requests_total (all labels summed) between two
 * reads is drawn as an inline SVG line over the last two minutes, with a rate axis (rounded up to
 * 1, 2 or 5 times a power of ten) and a time axis. The SVG stretches to the card's width; its
 * axis labels are HTML beside it, so they keep their size. SVG attributes and the stylesheet, not
 * style attributes, draw it: the CSP allows no inline style.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, type Json } from './api.js';
import { Errors } from './components.js';

const POLL_MS = 2000;
/** Points kept: two minutes at one read every two seconds. */
const POINTS = 60;
/** The drawing's own units; it is stretched to the box the stylesheet gives it. */
const WIDTH = 600;
const HEIGHT = 200;

/** Requests answered so far by this node, from sys/metrics's JSON form. */
function requestTotal(body: Json): number {
  const counters = (body?.Counters ?? []) as { Name: string; Count: number }[];
  return counters.filter((c) => c.Name === 'keywarden_requests_total').reduce((sum, c) => sum + c.Count, 0);
}

export function RequestRate() {
  const [rates, setRates] = useState<number[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [denied, setDenied] = useState(false);

  useEffect(() => {
    let last: { total: number; at: number } | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const poll = async () => {
      timer = undefined;
      if (document.hidden) return;
      try {
        const body = await api('GET', 'sys/metrics');
        const now = performance.now();
        const total = requestTotal(body);
        // A counter that went down belongs to a restarted node: start again from it.
        if (last && total >= last.total) {
          const rate = ((total - last.total) * 1000) / (now - last.at);
          setRates((previous) => [...previous, rate].slice(-POINTS));
        }
        last = { total, at: now };
        setError(null);
      } catch (err) {
        if (err instanceof ApiError && err.status === 403) {
          setDenied(true);
          return;
        }
        setError(err);
      }
      if (!stopped) timer = setTimeout(poll, POLL_MS);
    };
    // A hidden tab stops polling; it starts again, from a fresh count, when it is shown.
    const onVisible = () => {
      if (document.hidden || timer !== undefined || stopped) return;
      last = undefined;
      void poll();
    };
    document.addEventListener('visibilitychange', onVisible);
    void poll();
    return () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, []);

  if (denied) return <p class="muted">Your token may not read sys/metrics, so the request rate is not shown.</p>;
  const latest = rates.length > 0 ? rates[rates.length - 1]! : undefined;
  const peak = Math.max(0, ...rates);
  // The axis's top: the peak rounded up, so a trickle below 1/s stays near the bottom.
  const top = axisTop(peak);
  // Readings fill the time axis from the right ("now"), one slot every POLL_MS.
  const step = WIDTH / (POINTS - 1);
  const x = (i: number) => ((i + POINTS - rates.length) * step).toFixed(1);
  const points = rates.map((rate, i) => `${x(i)},${(HEIGHT - (rate / top) * HEIGHT).toFixed(1)}`).join(' ');
  const span = (POINTS - 1) * (POLL_MS / 1000);
  return (
    <div class="rate">
      <Errors error={error} />
      <p>
        <span class="rate-value" role="status" aria-label="Requests per second">
          {latest === undefined ? 'measuring…' : `${latest.toFixed(1)} requests/s`}
        </span>{' '}
        <span class="muted">(this node, every {POLL_MS / 1000}s; peak {rates.length > 0 ? peak.toFixed(1) : '—'}/s)</span>
      </p>
      <div class="chart">
        <div class="chart-y" aria-hidden="true">
          <span>{rateText(top)}/s</span>
          <span>{rateText(top / 2)}/s</span>
          <span>0/s</span>
        </div>
        <svg
          class="sparkline"
          viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
          preserveAspectRatio="none"
          role="img"
          aria-label={`Requests per second over the last ${Math.round(span / 60)} minutes, from 0 to ${rateText(top)} per second`}
        >
          {[0, HEIGHT / 2, HEIGHT].map((y) => (
            <line x1="0" y1={y} x2={WIDTH} y2={y} class={y === HEIGHT ? 'axis' : 'grid'} vector-effect="non-scaling-stroke" />
          ))}
          {rates.length > 1 && (
            <>
              <polygon points={`${x(0)},${HEIGHT} ${points} ${WIDTH},${HEIGHT}`} class="area" />
              <polyline points={points} fill="none" class="trace" vector-effect="non-scaling-stroke" />
            </>
          )}
        </svg>
        <div class="chart-x" aria-hidden="true">
          <span>{Math.round(span / 60)} min ago</span>
          <span>{Math.round(span / 120)} min ago</span>
          <span>now</span>
        </div>
      </div>
    </div>
  );
}

/** The smallest 1, 2 or 5 times a power of ten at or above the peak, and at least 1/s. */
function axisTop(peak: number): number {
  if (!(peak > 1)) return 1;
  const power = 10 ** Math.floor(Math.log10(peak));
  return [1, 2, 5, 10].map((m) => m * power).find((candidate) => candidate >= peak)!;
}

function rateText(rate: number): string {
  return Number.isInteger(rate) ? String(rate) : rate.toFixed(1);
}
