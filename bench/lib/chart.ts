/**
 * The SVG chart `npm run bench` writes beside its JSON results: one panel per benchmark, one bar
 * per comparison of a row — Keywarden's figure divided by a floor's or a peer's, measured side by
 * side in one run — with a line at 1, where Keywarden and the floor are level.
 */
import type { Row } from './report.js';

export interface BenchResult {
  readonly name: string;
  readonly date?: string;
  readonly rows: readonly Row[];
}

/** Columns that hold a ratio of ours to a floor: `ratio`, or named `vs …`. */
function isRatioColumn(column: string): boolean {
  return column === 'ratio' || column.startsWith('vs ');
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

const WIDTH = 960;
const LABEL_WIDTH = 430;
const BAR_HEIGHT = 16;
const GAP = 6;

/** Renders every benchmark that has ratio columns; the others are named as having none. */
export function benchChartSvg(results: readonly BenchResult[]): string {
  const body: string[] = [];
  let y = 30;
  body.push(`<text x="10" y="20" class="title">Keywarden against its floors and peers (ratio; 1 = level)</text>`);
  for (const result of results) {
    const bars = result.rows.flatMap((row) =>
      Object.entries(row)
        .filter(([column, value]) => isRatioColumn(column) && typeof value === 'number' && Number.isFinite(value))
        .map(([column, value]) => ({ label: `${rowLabel(row)} — ${column}`, value: value as number })),
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
        `<text x="${LABEL_WIDTH - 8}" y="${y}" class="label" text-anchor="end">${escapeXml(bar.label.length > 70 ? `${bar.label.slice(0, 69)}…` : bar.label)}</text>`,
        `<rect x="${LABEL_WIDTH}" y="${barTop}" width="${Math.max(1, x(bar.value) - LABEL_WIDTH).toFixed(1)}" height="${BAR_HEIGHT}" class="${bar.value >= 1 ? 'above' : 'below'}"><title>${escapeXml(bar.label)}: ${bar.value.toFixed(2)}</title></rect>`,
        `<text x="${(x(bar.value) + 4).toFixed(1)}" y="${y}" class="value">${bar.value.toFixed(2)}</text>`,
      );
    }
    body.push(`<line x1="${x(1).toFixed(1)}" y1="${top}" x2="${x(1).toFixed(1)}" y2="${y + 6}" class="level"/>`);
  }
  const height = y + 20;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif">`,
    '<style>.title{font-size:16px;font-weight:bold}.bench{font-size:14px;font-weight:bold}.label,.value,.note{font-size:12px}' +
      '.note{fill:#666}.above{fill:#2b7a3d}.below{fill:#c0582b}.level{stroke:#222;stroke-dasharray:4 3}</style>',
    `<rect width="${WIDTH}" height="${height}" fill="#fff"/>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}
