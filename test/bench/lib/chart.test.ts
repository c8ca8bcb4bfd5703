import { expect } from 'chai';
import { XMLValidator } from 'fast-xml-parser';
import { benchChartSvg, type BenchResult } from '../../../bench/lib/chart.js';

describe('the benchmark chart (bench/lib/chart.ts)', () => {
  const results: BenchResult[] = [
    {
      name: 'transit-http',
      date: '2026-11-24T10:00:00.000Z',
      rows: [
        { operation: 'encrypt', batch: '1,000 × 64 B', 'keywarden items/s': 500_000, 'naive items/s': 100_000, 'vs naive': 5, 'vs echo': 0.5, 'ranges (keywarden, naive, echo)': '1–2' },
        { operation: 'decrypt <&>', batch: '100 × 1 KB', 'keywarden items/s': 50_000, 'vs naive': 2.5 },
      ],
    },
    {
      name: 'transit-ops',
      rows: [
        { measure: 'single-item encrypt, 1 connection, p50 latency (ms)', keywarden: 0.3, against: 'bare koa echo', ratio: 3 },
        { measure: 'server CPU per request (µs; ratio: theirs / ours)', keywarden: 100, against: 'bare koa echo', ratio: 0.3 },
        { measure: 'RSS after the load (MB)', keywarden: 150, against: 'target', ratio: 0.75 },
      ],
    },
    { name: 'metrics-cost', rows: [{ operation: 'batch', 'on / off': 0.98, 'CPU on / off': 1.02 }] },
    { name: 'cloud-login', rows: [{ measure: 'iam login', 'p50 ms': 3 }] },
  ];
  const svg = benchChartSvg(results);
  const bars = [...svg.matchAll(/<rect x="(\d+)" y="[\d.]+" width="([\d.]+)" height="16" class="(better|worse)"><title>([^<]*)<\/title>/g)];

  it('is well-formed SVG', () => {
    expect(XMLValidator.validate(svg)).to.equal(true);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).to.equal(true);
  });

  it('draws one bar per ratio column of each row, long in proportion to the ratio, coloured by which side of 1 it is', () => {
    expect(bars.slice(0, 3).map((b) => b[4])).to.deep.equal([
      'encrypt, 1,000 × 64 B — vs naive: 5.00',
      'encrypt, 1,000 × 64 B — vs echo: 0.50',
      'decrypt &#60;&#38;&#62;, 100 × 1 KB — vs naive: 2.50',
    ]);
    const widths = bars.map((b) => Number(b[2]));
    expect(widths[0]! / widths[1]!).to.be.closeTo(10, 0.05);
    expect(widths[0]! / widths[2]!).to.be.closeTo(2, 0.01);
    expect(bars.slice(0, 3).map((b) => b[3])).to.deep.equal(['better', 'worse', 'better']);
  });

  it('colours times and sizes the other way round (lower is better) unless the ratio is theirs / ours, and reads a / b columns', () => {
    const rest = bars.slice(3).map((b) => [b[4]!.replace(/: [\d.]+$/, ''), b[3]]);
    expect(rest).to.deep.equal([
      ['single-item encrypt, 1 connection, p50 latency (ms), bare koa echo — ratio (lower is better)', 'worse'],
      ['server CPU per request (µs; ratio: theirs / ours), bare koa echo — ratio', 'worse'],
      ['RSS after the load (MB), target — ratio (lower is better)', 'better'],
      ['batch — on / off', 'worse'],
      ['batch — CPU on / off (lower is better)', 'worse'],
    ]);
  });

  it('marks the level line at 1 and names a benchmark without ratios instead of drawing it', () => {
    const line = /<line x1="([\d.]+)"/.exec(svg)!;
    const start = Number(bars[0]![1]);
    expect((Number(line[1]) - start) / Number(bars[0]![2])).to.be.closeTo(1 / 5, 0.01);
    expect(svg).to.contain('transit-http (2026-11-24)');
    expect(svg).to.contain('cloud-login');
    expect(svg).to.contain('no ratio columns');
  });
});
