/** Building blocks every page uses: forms that show the server's errors, confirmations, copy buttons, batch input. */
import { cloneElement, toChildArray, type ComponentChildren, type JSX, type RefObject, type TargetedEvent } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';

/** The server's messages for a failed request, read out by screen readers as they appear. */
export function Errors({ error }: { error: unknown }) {
  if (!error) return null;
  const messages = error instanceof ApiError ? error.messages : [error instanceof Error ? error.message : typeof error === 'string' ? error : JSON.stringify(error)];
  return (
    <div class="error" role="alert">
      {messages.map((message) => (
        <p>{message}</p>
      ))}
    </div>
  );
}

/** Runs an async action, keeping its busy state, its last error and its last result. */
export function useAction<T>(): {
  run: (action: () => Promise<T>) => Promise<T | undefined>;
  busy: boolean;
  error: unknown;
  result: T | undefined;
  reset: () => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState<T | undefined>(undefined);
  return {
    busy,
    error,
    result,
    reset: () => {
      setError(null);
      setResult(undefined);
    },
    run: async (action) => {
      setBusy(true);
      setError(null);
      try {
        const value = await action();
        setResult(value);
        return value;
      } catch (err) {
        setError(err);
        setResult(undefined);
        return undefined;
      } finally {
        setBusy(false);
      }
    },
  };
}

/** Loads data when a page opens (and again when `deps` change or `reload` is called). */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): { data: T | undefined; error: unknown; reload: () => void } {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let current = true;
    setError(null);
    load().then(
      (value) => current && setData(value),
      (err) => {
        if (!current) return;
        setData(undefined);
        setError(err);
      },
    );
    return () => {
      current = false;
    };
  }, [...deps, tick]);
  return { data, error, reload: () => setTick((n) => n + 1) };
}

/**
 * A labelled control. The label points at the control by id rather than wrapping it, so the
 * control's accessible name is the label alone (a wrapped select would add its chosen option).
 */
export function Field(props: { label: string; hint?: string; children: ComponentChildren }) {
  const id = useId();
  let labelled = false;
  const children = toChildArray(props.children).map((child) => {
    if (labelled || typeof child !== 'object' || typeof child.type !== 'string' || child.type === 'datalist') return child;
    labelled = true;
    return cloneElement(child, { id, ...(props.hint ? { 'aria-describedby': `${id}-hint` } : {}) });
  });
  return (
    <div class="field">
      <label for={id} class="label">
        {props.label}
      </label>
      {children}
      {props.hint && (
        <span class="hint" id={`${id}-hint`}>
          {props.hint}
        </span>
      )}
    </div>
  );
}

/** A form whose submit runs `onSubmit`; the button shows that it is busy, errors show below it. */
export function Form(props: {
  onSubmit: () => unknown;
  submit: string;
  busy?: boolean;
  error?: unknown;
  children: ComponentChildren;
  class?: string;
  label?: string;
  /** When set, submitting first asks for confirmation with this message (a destructive submit). */
  confirm?: string;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  return (
    <form
      class={`form ${props.class ?? ''}`}
      aria-label={props.label ?? props.submit}
      onSubmit={(event) => {
        event.preventDefault();
        if (props.confirm) dialog.current?.showModal();
        else props.onSubmit();
      }}
    >
      {props.confirm && <ConfirmDialog dialog={dialog} action={props.submit} message={props.confirm} onConfirm={props.onSubmit} />}
      {props.children}
      <div class="actions">
        <button type="submit" class="primary" disabled={props.busy}>
          {props.busy ? 'Working…' : props.submit}
        </button>
      </div>
      <Errors error={props.error} />
    </form>
  );
}

/**
 * A button for a destructive action: it opens a modal dialog that names what will happen, and the
 * action runs only on "Confirm". The dialog traps focus and closes on Escape (the browser's own modal).
 */
export function ConfirmButton(props: { label: string; message: string; onConfirm: () => unknown; class?: string }) {
  const dialog = useRef<HTMLDialogElement>(null);
  return (
    <>
      <button type="button" class={props.class ?? 'danger'} onClick={() => dialog.current?.showModal()}>
        {props.label}
      </button>
      <ConfirmDialog dialog={dialog} action={props.label} message={props.message} onConfirm={props.onConfirm} />
    </>
  );
}

/**
 * Asks before an action when whether to ask is known only as it runs (an encrypt that would create a
 * key): `ask` opens the modal with that message; "Confirm" runs `onConfirm`, "Cancel" or Escape nothing.
 */
export function useConfirm(action: string, confirmLabel?: string): { ask: (message: string, onConfirm: () => unknown) => void; dialog: JSX.Element } {
  const dialog = useRef<HTMLDialogElement>(null);
  const [pending, setPending] = useState<{ message: string; onConfirm: () => unknown } | null>(null);
  useEffect(() => {
    if (pending && !dialog.current?.open) dialog.current?.showModal();
  }, [pending]);
  return {
    ask: (message, onConfirm) => setPending({ message, onConfirm }),
    dialog: (
      <ConfirmDialog
        dialog={dialog}
        action={action}
        message={pending?.message ?? ''}
        onConfirm={() => pending?.onConfirm()}
        onClose={() => setPending(null)}
        {...(confirmLabel ? { confirmLabel } : {})}
      />
    ),
  };
}

/** The modal that asks before a destructive action: "Cancel" (focused first) or "Confirm", which runs it. */
function ConfirmDialog(props: {
  dialog: RefObject<HTMLDialogElement | null>;
  action: string;
  message: string;
  onConfirm: () => unknown;
  onClose?: () => void;
  confirmLabel?: string;
}) {
  return (
    <dialog ref={props.dialog} class="confirm" aria-label={`Confirm: ${props.action}`} onClose={props.onClose}>
      <p>{props.message}</p>
      <div class="actions">
        <button type="button" onClick={() => props.dialog.current?.close()} autofocus>
          Cancel
        </button>
        <button
          type="button"
          class="danger"
          onClick={() => {
            props.dialog.current?.close();
            props.onConfirm();
          }}
        >
          {props.confirmLabel ?? 'Confirm'}
        </button>
      </div>
    </dialog>
  );
}

/** Copies text to the clipboard; falls back to selecting a hidden field where the Clipboard API is unavailable (plain HTTP). */
export function CopyButton({ text, label = 'Copy', name }: { text: string; label?: string; name?: string }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      const area = document.createElement('textarea');
      area.value = text;
      document.body.append(area);
      area.select();
      document.execCommand('copy');
      area.remove();
    }
    setDone(true);
    setTimeout(() => setDone(false), 1500);
  };
  return (
    <button type="button" class="copy" onClick={copy} aria-label={`${label}${name ? ` ${name}` : ''} to clipboard`}>
      {done ? 'Copied' : label}
    </button>
  );
}

/** A value shown in full with its copy button. */
export function Output({ label, value }: { label: string; value: string }) {
  return (
    <div class="output">
      <div class="output-head">
        <span class="label">{label}</span>
        <CopyButton text={value} />
      </div>
      <pre tabIndex={0} aria-label={label}>
        {value}
      </pre>
    </div>
  );
}

/**
 * One item, or a batch: lines pasted into a box or read from an uploaded text file, one item a
 * line (blank lines skipped).
 */
export function BatchInput(props: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  batch: boolean;
  onBatch: (batch: boolean) => void;
  placeholder?: string;
}) {
  const [fileError, setFileError] = useState<string | null>(null);
  const onFile = async (event: TargetedEvent<HTMLInputElement>) => {
    const file = event.currentTarget.files?.[0];
    if (!file) return;
    try {
      props.onChange(await file.text());
      props.onBatch(true);
      setFileError(null);
    } catch {
      setFileError(`cannot read ${file.name}`);
    }
  };
  return (
    <fieldset class="batch">
      <legend>{props.label}</legend>
      <div class="radios" role="radiogroup" aria-label={`${props.label}: single item or batch`}>
        <label>
          <input type="radio" checked={!props.batch} onChange={() => props.onBatch(false)} /> Single item
        </label>
        <label>
          <input type="radio" checked={props.batch} onChange={() => props.onBatch(true)} /> Batch (one item a line)
        </label>
      </div>
      {props.batch ? (
        <textarea
          aria-label={`${props.label}, one item a line`}
          rows={6}
          value={props.value}
          placeholder={props.placeholder}
          onInput={(e) => props.onChange(e.currentTarget.value)}
        />
      ) : (
        <input aria-label={props.label} value={props.value} placeholder={props.placeholder} onInput={(e) => props.onChange(e.currentTarget.value)} />
      )}
      <label class="file">
        <span class="label">…or upload a file (one item a line)</span>
        <input type="file" accept=".txt,.csv,text/plain" onChange={onFile} aria-label={`Upload ${props.label} as a file`} />
      </label>
      {fileError && <p class="error">{fileError}</p>}
    </fieldset>
  );
}

export function lines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

/** A file the browser saves: built in memory, offered through a temporary object URL. */
export function download(name: string, content: string, type = 'text/plain'): void {
  const url = URL.createObjectURL(new Blob([content], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/**
 * A titled card. `reveal`: scrolled into view when it opens (a detail picked from a list), where a
 * narrow screen puts it below the list; on a wide one it is already in view and nothing moves.
 */
export function Section(props: { title: string; children: ComponentChildren; reveal?: boolean }) {
  const ref = useRef<HTMLElement>(null);
  useEffect(() => {
    if (props.reveal) ref.current?.scrollIntoView({ block: 'nearest' });
  }, []);
  return (
    <section class="card" aria-label={props.title} ref={ref}>
      <h2>{props.title}</h2>
      {props.children}
    </section>
  );
}

export function formatTime(value: string | number | undefined): string {
  if (value === undefined || value === '') return '—';
  const date = typeof value === 'number' ? new Date(value * 1000) : new Date(value);
  return Number.isNaN(date.getTime()) ? String(value) : date.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

/**
 * Seconds as the duration an operator types and the server reads back ("1h", "1h30m", "720h"):
 * hours, minutes and seconds, each left out when zero (Go's "1h0m0s" without its zeros).
 */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds <= 0) return '0s';
  const whole = Math.floor(seconds);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = whole % 60;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s ? `${s}s` : ''}`;
}

/** A page's heading; focused when the page opens, so keyboard and screen-reader users start there. */
export function Title({ children }: { children: ComponentChildren }) {
  return <h1 tabIndex={-1}>{children}</h1>;
}
