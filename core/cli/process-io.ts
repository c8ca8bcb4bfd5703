/** The real terminal: stdout, stderr, stdin, and a prompt that does not echo. */
import type { Io } from './output.js';

export function processIo(): Io {
  return {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    isTerminal: process.stdout.isTTY === true,
    errIsTerminal: process.stderr.isTTY === true,
    stdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    secret: (prompt) => {
      if (!process.stdin.isTTY) return Promise.resolve(undefined);
      return new Promise((resolve) => {
        process.stderr.write(prompt);
        const stdin = process.stdin;
        stdin.setRawMode(true);
        stdin.resume();
        let value = '';
        const onData = (chunk: Buffer) => {
          for (const ch of chunk.toString('utf8')) {
            if (ch === '\r' || ch === '\n' || ch === '\u0004') {
              stdin.setRawMode(false);
              stdin.pause();
              stdin.off('data', onData);
              process.stderr.write('\n');
              resolve(value);
              return;
            }
            if (ch === '\u0003') {
              stdin.setRawMode(false);
              process.exit(130);
            }
            if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
            else value += ch;
          }
        };
        stdin.on('data', onData);
      });
    },
  };
}
