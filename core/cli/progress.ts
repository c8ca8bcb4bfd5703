/**
 * A one-line progress bar on standard error for long transfers (snapshots), drawn only when
 * standard error is a terminal, so scripts and logs never see carriage returns.
 */
import type { Io } from './output.js';

/** Redraw at most this often. */
const REDRAW_MS = 100;
const BAR_WIDTH = 30;

export class Progress {
  private done = 0;
  private lastDraw = 0;
  private drawn = false;
  private readonly started = Date.now();

  /**
   * @param label what is moving ("Saving snapshot").
   * @param total bytes expected, when known: a bar and a percentage; otherwise bytes and rate only.
   */
  constructor(
    private readonly io: Io,
    private readonly label: string,
    private readonly total?: number,
  ) {}

  /** `n` more bytes moved. */
  add(n: number): void {
    this.done += n;
    if (!this.io.errIsTerminal) return;
    const now = Date.now();
    if (now - this.lastDraw < REDRAW_MS) return;
    this.lastDraw = now;
    this.draw(now);
  }

  /** Clears the line (the command prints its own result after). */
  finish(): void {
    if (!this.drawn) return;
    this.io.err('\r\u001b[2K');
    this.drawn = false;
  }

  private draw(now: number): void {
    const seconds = Math.max((now - this.started) / 1000, 0.001);
    const rate = `${bytes(this.done / seconds)}/s`;
    let line: string;
    if (this.total && this.total > 0) {
      const share = Math.min(this.done / this.total, 1);
      const filled = Math.round(share * BAR_WIDTH);
      line = `${this.label} [${'='.repeat(filled)}${' '.repeat(BAR_WIDTH - filled)}] ${Math.floor(share * 100)}% ${bytes(this.done)}/${bytes(this.total)} ${rate}`;
    } else {
      line = `${this.label} ${bytes(this.done)} ${rate}`;
    }
    this.io.err(`\r\u001b[2K${line}`);
    this.drawn = true;
  }
}

/** A byte count as people read it: 512 B, 1.5 KiB, 12.3 MiB. */
export function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${Math.round(value)} B` : `${value.toFixed(1)} ${units[unit]}`;
}
