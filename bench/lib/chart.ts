/**
 * The SVG chart `npm run bench` writes beside its JSON results: one panel per benchmark, one bar
 * per comparison of a row — Keywarden's figure divided by a floor's or a peer's, measured side by
 * side in one run — with a line at 1, where Keywarden and the floor are level. A bar is green where
 * Keywarden comes out better and orange where worse: above 1 for rates, below 1 for times and sizes
 * (latency, milliseconds, megabytes, CPU per request), unless the row's ratio is already "theirs /
 * ours".
 */
import type { Row } from './report.js';

export interface BenchResult {
  readonly name: string;
  readonly date?: string;
  readonly rows: readonly Row[];
}

/** Columns that hold a ratio of ours to a floor: `ratio`, named `vs …`, or `a / b` (`on / off`, `save / floor`). */
function isRatioColumn(column: string): boolean {
  return column === 'ratio' || column.startsWith('vs ') || / \/ /.test(column);
}

/** Whether less is better for a row's ratio: a time or a size of ours over theirs, not a rate. */
function lowerIsBetter(label: string, column: string): boolean {
  if (/theirs \/ ours/.test(label)) return false;
  return /latency|\(ms\)|\(MB\)|µs/.test(label) || /^CPU /.test(column);
}

/** A row's name: its text columns, less the measured ranges. */
function rowLabel(row: Row): string {
  return Object.entries(row)
    .filter(([column, value]) => typeof value === 'string' && !column.startsWith('ranges'))
    .map(([, value]) => value)
    .join(', ');
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const WIDTH = 1100;
const LABEL_WIDTH = 560;
const BAR_HEIGHT = 16;
const GAP = 6;

/** Renders every benchmark that has ratio columns; the others are named as having none. */
export function benchChartSvg(results: readonly BenchResult[]): string {
  const body: string[] = [];
  let y = 30;
  body.push(`<text x="10" y="20" class="title">Keywarden against its floors and peers (ratio; 1 = level; green: Keywarden better, orange: worse)</text>`);
  for (const result of results) {
    const bars = result.rows.flatMap((row) =>
      Object.entries(row)
        .filter(([column, value]) => isRatioColumn(column) && typeof value === 'number' && Number.isFinite(value))
        .map(([column, value]) => {
          const lower = lowerIsBetter(rowLabel(row), column);
          const better = lower ? (value as number) <= 1 : (value as number) >= 1;
          return { label: `${rowLabel(row)} — ${column}${lower ? ' (lower is better)' : ''}`, value: value as number, better };
        }),
    );
    y += 22;
    body.push(`<text x="10" y="${y}" class="bench">${escapeXml(result.name)}${result.date ? ` (${escapeXml(result.date.slice(0, 10))})` : ''}</text>`);
    if (bars.length === 0) {
      y += 18;
      body.push(`<text x="20" y="${y}" class="note">no ratio columns: see its table</text>`);
      continue;
    }
    const scaleMax = Math.max(1, ...bars.map((bar) => bar.value)) * 1.1;
    const plotWidth = WIDTH - LABEL_WIDTH - 70;
    const x = (value: number) => LABEL_WIDTH + (plotWidth * value) / scaleMax;
    const top = y + 8;
    for (const bar of bars) {
      y += BAR_HEIGHT + GAP;
      const barTop = y - BAR_HEIGHT + 4;
      body.push(
        `<text x="${LABEL_WIDTH - 8}" y="${y}" class="label" text-anchor="end">${escapeXml(bar.label.length > 92 ? `${bar.label.slice(0, 91)}…` : bar.label)}</text>`,
        `<rect x="${LABEL_WIDTH}" y="${barTop}" width="${Math.max(1, x(bar.value) - LABEL_WIDTH).toFixed(1)}" height="${BAR_HEIGHT}" class="${bar.better ? 'better' : 'worse'}"><title>${escapeXml(bar.label)}: ${bar.value.toFixed(2)}</title></rect>`,
        `<text x="${(x(bar.value) + 4).toFixed(1)}" y="${y}" class="value">${bar.value.toFixed(2)}</text>`,
      );
    }
    body.push(`<line x1="${x(1).toFixed(1)}" y1="${top}" x2="${x(1).toFixed(1)}" y2="${y + 6}" class="level"/>`);
  }
  const height = y + 20;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif">`,
    '<style>.title{font-size:16px;font-weight:bold}.bench{font-size:14px;font-weight:bold}.label,.value,.note{font-size:12px}' +
      '.note{fill:#666}.better{fill:#2b7a3d}.worse{fill:#c0582b}.level{stroke:#222;stroke-dasharray:4 3}</style>',
    `<rect width="${WIDTH}" height="${height}" fill="#fff"/>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}
