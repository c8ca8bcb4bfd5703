/**
 * The dashboard's live request rate: sys/metrics is read every few seconds while the page is open
 * and the tab visible, and the growth of keywarden_requests_total (all labels summed) between two
 * reads is drawn as an inline SVG line. SVG attributes, not style attributes, draw it: the CSP
 * allows no inline style.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, type Json } from './api.js';
import { Errors } from './components.js';

const POLL_MS = 2000;
/** Points kept: two minutes at one read every two seconds. */
const POINTS = 60;
const WIDTH = 240;
const HEIGHT = 48;

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
  // The line's height is relative to the peak, but a trickle below 1/s stays near the bottom.
  const scale = Math.max(1, peak);
  // The first readings spread over a short window, so a fresh chart is not a sliver at the right edge.
  const slots = Math.max(rates.length, 10);
  const step = WIDTH / (slots - 1);
  const points = rates.map((rate, i) => `${((i + slots - rates.length) * step).toFixed(1)},${(HEIGHT - 2 - (rate / scale) * (HEIGHT - 4)).toFixed(1)}`).join(' ');
  return (
    <div class="rate">
      <Errors error={error} />
      <p>
        <span class="rate-value" role="status" aria-label="Requests per second">
          {latest === undefined ? 'measuring…' : `${latest.toFixed(1)} requests/s`}
        </span>{' '}
        <span class="muted">(this node, every {POLL_MS / 1000}s; peak {rates.length > 0 ? peak.toFixed(1) : '—'}/s)</span>
      </p>
      <svg class="sparkline" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} width={WIDTH} height={HEIGHT} role="img" aria-label={`Request rate over the last ${rates.length} readings`}>
        <line x1="0" y1={HEIGHT - 1} x2={WIDTH} y2={HEIGHT - 1} class="axis" />
        {rates.length > 1 && (
          <>
            <polygon points={`${((slots - rates.length) * step).toFixed(1)},${HEIGHT - 1} ${points} ${WIDTH},${HEIGHT - 1}`} class="area" />
            <polyline points={points} fill="none" class="trace" />
          </>
        )}
      </svg>
    </div>
  );
}
