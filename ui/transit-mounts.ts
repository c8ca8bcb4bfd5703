/** Which transit mounts the UI offers: read from sys/mounts when the token may, else the default `transit/`. */
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';

export function useTransitMounts(): string[] {
  const [mounts, setMounts] = useState<string[]>(['transit']);
  useEffect(() => {
    api('GET', 'sys/mounts').then(
      (body) => {
        const table = (body?.data ?? body) as Record<string, { type?: string }>;
        const found = Object.entries(table)
          .filter(([, entry]) => entry?.type === 'transit')
          .map(([path]) => path.replace(/\/$/, ''));
        if (found.length > 0) setMounts(found);
      },
      () => undefined,
    );
  }, []);
  return mounts;
}
