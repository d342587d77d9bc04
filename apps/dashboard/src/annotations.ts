// Issue 48 on the dashboard: the project's annotations (deploys, campaigns, incidents, notes) drawn on the main chart
// at their time buckets (in the project's time zone, as the chart counts), their text on hover or focus, listed under
// the chart. They come with the chart's own series (POST /v1/insights with a time:* dimension answers them), so a
// share link draws them too. Editors (signed in, role editor or above) add one from the chart (a click on a bucket
// fills the form's time) and delete them, through /admin/projects/:id/annotations. docs/dashboard.md "Annotations".
import type uPlot from 'uplot';
import type { Annotation, AnnotationKind } from '@analytics/schema';
import { $, el } from './dom';
import { confirmButton, currentProject } from './people';
import { canEdit } from './saved';
import { call } from './session';
import { type Interval, wallMs } from './state';

/** The annotations of one bucket of the chart: its index, its start (wall clock as epoch ms read as UTC) and its notes. */
export interface AnnotationMark {
  index: number;
  bucket: number;
  items: Annotation[];
}

const KINDS: readonly AnnotationKind[] = ['note', 'deploy', 'campaign', 'incident'];
const KIND_WORD: Readonly<Record<AnnotationKind, string>> = { note: 'Note', deploy: 'Deploy', campaign: 'Campaign', incident: 'Incident' };

/** Each annotation under the bucket its instant falls in, in `timeZone` (buckets as bucketStarts gives them); outside the buckets: left out. */
export function annotationMarks(buckets: readonly number[], interval: Interval, annotations: readonly Annotation[], timeZone: string): AnnotationMark[] {
  const width = interval === 'hour' ? 3_600_000 : interval === 'day' ? 86_400_000 : 7 * 86_400_000;
  const marks = new Map<number, AnnotationMark>();
  for (const a of annotations) {
    const wall = wallMs(Date.parse(a.at), timeZone);
    let index = -1;
    for (let i = 0; i < buckets.length && buckets[i]! <= wall; i++) index = i;
    if (index < 0 || wall >= buckets[index]! + width) continue;
    const mark = marks.get(index) ?? { index, bucket: buckets[index]!, items: [] };
    mark.items.push(a);
    marks.set(index, mark);
  }
  return [...marks.values()].sort((x, y) => x.index - y.index);
}

/** `2026-03-04 09:30` of an instant's wall clock in the zone. */
const wallText = (at: string, timeZone: string) => new Date(wallMs(Date.parse(at), timeZone)).toISOString().slice(0, 16).replace('T', ' ');
/** One annotation in words: when (in the project's zone), its kind and its text. */
export const annotationText = (a: Annotation, timeZone: string) => `${wallText(a.at, timeZone)} ${timeZone} · ${KIND_WORD[a.kind]}: ${a.text}`;

/**
 * The chart's annotation markers: a line and a small flag per bucket with notes, placed over the plot at the bucket's
 * x; hovering or focusing a flag shows its notes (also its `title`). `onBucket`: a click on the plot names its bucket.
 */
export function annotationsPlugin(marks: readonly AnnotationMark[], timeZone: string, onBucket?: (bucket: number) => void): uPlot.Plugin {
  let layer: HTMLDivElement;
  let tip: HTMLDivElement;
  const place = (u: uPlot) => {
    for (const flag of layer.querySelectorAll<HTMLElement>('.annotation-marker')) {
      const x = u.valToPos(Number(flag.dataset['bucket']) / 1000, 'x');
      flag.style.left = `${x}px`;
      flag.hidden = x < 0 || x > u.over.clientWidth;
    }
  };
  return {
    hooks: {
      init: (u) => {
        layer = el('div', { className: 'annotation-layer' });
        tip = el('div', { className: 'annotation-tip', hidden: true });
        tip.setAttribute('role', 'status');
        for (const mark of marks) {
          const text = mark.items.map((a) => annotationText(a, timeZone)).join('\n');
          const flag = el('button', { type: 'button', className: `annotation-marker kind-${mark.items[0]!.kind}`, title: text });
          flag.dataset['bucket'] = String(mark.bucket);
          flag.dataset['count'] = String(mark.items.length);
          flag.setAttribute('aria-label', `Annotation${mark.items.length > 1 ? 's' : ''}: ${text}`);
          const showTip = () => {
            tip.textContent = text;
            tip.hidden = false;
            tip.style.left = `${Math.max(0, Math.min(parseFloat(flag.style.left) || 0, u.over.clientWidth - 240))}px`;
          };
          const hideTip = () => void (tip.hidden = true);
          flag.addEventListener('mouseenter', showTip);
          flag.addEventListener('focus', showTip);
          flag.addEventListener('mouseleave', hideTip);
          flag.addEventListener('blur', hideTip);
          layer.append(flag);
        }
        layer.append(tip);
        u.over.appendChild(layer);
        if (onBucket) {
          u.over.addEventListener('click', (e) => {
            if ((e.target as HTMLElement).closest('.annotation-marker')) return;
            const i = u.cursor.idx;
            if (i !== null && i !== undefined) onBucket(u.data[0][i]! * 1000);
          });
        }
      },
      ready: place,
      setSize: place,
    },
  };
}

// ---- the list under the chart and the editors' form ----

let reload: () => void = () => undefined;

/** The form's time, from a bucket start (the project's wall clock): `datetime-local`'s `YYYY-MM-DDTHH:MM`. */
export function fillAnnotationTime(bucket: number): void {
  const input = $<HTMLInputElement>('annotation-at');
  if (!input || $('annotation-form').hidden) return;
  input.value = new Date(bucket).toISOString().slice(0, 16);
  $<HTMLInputElement>('annotation-text').focus();
}

/** An instant from the project's wall clock (`YYYY-MM-DDTHH:MM` read in `timeZone`): the offset there, found twice for a change of offset. */
export function instantOfWall(wall: string, timeZone: string): number {
  const asUtc = Date.parse(`${wall}:00Z`);
  let guess = asUtc - (wallMs(asUtc, timeZone) - asUtc);
  guess = asUtc - (wallMs(guess, timeZone) - guess);
  return guess;
}

/** The range's annotations listed under the chart (everyone), with Delete for editors; the form shown to editors only. */
export function renderAnnotations(annotations: readonly Annotation[], timeZone: string): void {
  const editor = canEdit();
  const box = $('annotations');
  box.hidden = annotations.length === 0 && !editor;
  $('annotation-form').hidden = !editor;
  $('annotation-zone').textContent = timeZone;
  const project = currentProject();
  $('annotation-list').replaceChildren(
    ...annotations.map((a) => {
      const li = el('li', {}, el('span', { className: `annotation-kind kind-${a.kind}` }, KIND_WORD[a.kind]), ' ', el('span', { className: 'annotation-when' }, `${wallText(a.at, timeZone)}`), ' ', el('span', { className: 'annotation-text' }, a.text));
      li.dataset['id'] = a.id;
      if (editor && project) {
        li.append(
          ' ',
          confirmButton('Delete', `Delete annotation: ${a.text}`, 'Confirm delete', async () => {
            await call('DELETE', `/admin/projects/${encodeURIComponent(project.id)}/annotations/${encodeURIComponent(a.id)}`);
            reload();
          }),
        );
      }
      return li;
    }),
  );
}

/** The editors' form (set up once): adds an annotation at the form's time, then draws the view again. */
export function setUpAnnotations(onChange: () => void, zone: () => string): void {
  reload = onChange;
  const kind = $<HTMLSelectElement>('annotation-kind');
  kind.replaceChildren(...KINDS.map((k) => el('option', { value: k, textContent: KIND_WORD[k] })));
  $('annotation-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const project = currentProject();
    const at = $<HTMLInputElement>('annotation-at').value;
    const text = $<HTMLInputElement>('annotation-text').value.trim();
    const status = $('annotation-status');
    if (!project || !at || !text) {
      status.textContent = 'Give the annotation a time and a text.';
      return;
    }
    status.textContent = 'Adding…';
    call('POST', `/admin/projects/${encodeURIComponent(project.id)}/annotations`, { at: new Date(instantOfWall(at, zone())).toISOString(), text, kind: kind.value })
      .then(() => {
        status.textContent = 'Added.';
        $<HTMLInputElement>('annotation-text').value = '';
        reload();
      })
      .catch((err: unknown) => void (status.textContent = err instanceof Error ? err.message : String(err)));
  });
}
