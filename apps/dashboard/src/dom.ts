// DOM helpers shared by the dashboard's panels.

export const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

const exact = new Intl.NumberFormat('en');
const compact = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });

/** A number as shown: compact from 100,000 up, the exact value in `title` (hover) and `data-value` (tests). */
export function setNumber(el: HTMLElement, n: number): void {
  el.textContent = n >= 100_000 ? compact.format(n) : exact.format(n);
  el.title = exact.format(n);
  el.dataset['value'] = String(n);
}

export const el = <K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> = {}, ...children: (Node | string)[]) => {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
};

const seconds = new Intl.NumberFormat('en', { maximumFractionDigits: 0 });

/** A duration in seconds as shown: `42 s`, `3 min 05 s`, `1 h 02 min`. */
export function durationText(s: number): string {
  const whole = Math.round(s);
  if (whole < 60) return `${seconds.format(whole)} s`;
  if (whole < 3600) return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, '0')} s`;
  return `${Math.floor(whole / 3600)} h ${String(Math.floor((whole % 3600) / 60)).padStart(2, '0')} min`;
}

/** A share 0..1 as a whole percent (`12%`), its exact value in `data-value`. */
export function setShare(el: HTMLElement, share: number): void {
  el.textContent = `${Math.round(share * 100)}%`;
  el.title = String(share);
  el.dataset['value'] = String(share);
}

let flagEmoji: boolean | undefined;

/**
 * Whether this browser draws flag emoji (a font with them is installed): a flag drawn on a canvas comes out in colour,
 * while a browser without such a font draws two plain regional-indicator letters. Asked once per page.
 */
export function rendersFlagEmoji(): boolean {
  if (flagEmoji !== undefined) return flagEmoji;
  flagEmoji = false;
  try {
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 20;
    const ctx = canvas.getContext('2d', { willReadFrequently: true });
    if (!ctx) return flagEmoji;
    ctx.textBaseline = 'top';
    ctx.font = '16px sans-serif';
    ctx.fillStyle = '#000';
    ctx.fillText('\u{1F1FA}\u{1F1F8}', 0, 0);
    const d = ctx.getImageData(0, 0, 20, 20).data;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3]! > 0 && (Math.abs(d[i]! - d[i + 1]!) > 40 || Math.abs(d[i + 1]! - d[i + 2]!) > 40)) return (flagEmoji = true);
    }
  } catch {
    // No canvas: the codes.
  }
  return flagEmoji;
}
