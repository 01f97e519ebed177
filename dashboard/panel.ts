/**
 * A panel: a titled section whose body `load` fills, refreshed every `everyMs` while the tab is visible (a hidden tab
 * asks nothing; it refreshes at once when shown again). A failed load shows its error in the panel (the rest of the
 * page goes on); `data-state` says loading, ready, empty or error, and `data-loads` counts finished loads.
 */
import { ApiError } from './api.js';
import { h } from './dom.js';

export interface PanelSpec {
  id: string;
  title: string;
  /** Controls shown beside the title (a change should call `refresh`). */
  controls?: Node[];
  everyMs: number;
  /**
   * Fills `body` (`width`: the panel's, in CSS pixels), registering with `dispose` what must be undone when it is
   * replaced (a chart); returns false when there is nothing to show (then `empty` is shown).
   */
  load(body: HTMLElement, context: { width: number; dispose: (undo: () => void) => void }): Promise<boolean>;
  /** What to do when there is nothing to show. */
  empty(): string;
}

export class Panel {
  readonly element: HTMLElement;
  private readonly body: HTMLElement;
  private readonly status: HTMLElement;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running = false;
  private again = false;
  private loads = 0;
  private stopped = false;
  /** What the body shown needs undone when it is replaced. */
  private undos: (() => void)[] = [];

  constructor(
    private readonly spec: PanelSpec,
    /** Called with an UNAUTHENTICATED error: the session ended. */
    private readonly signedOut: (error: ApiError) => void,
  ) {
    this.body = h('div', { className: 'body' });
    this.status = h('span', { className: 'status', role: 'status' });
    this.element = h(
      'section',
      { className: 'panel', id: `panel-${spec.id}`, 'data-panel': spec.id, 'data-state': 'loading', 'data-loads': 0 },
      h('header', {}, h('h2', {}, spec.title), ...(spec.controls ?? []), this.status),
      this.body,
    );
  }

  /** Loads now (or right after the load under way), then every `everyMs` while the tab is visible. */
  refresh(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.running) {
      this.again = true;
      return;
    }
    if (document.visibilityState === 'hidden') return; // visibilitychange calls refresh when it is shown
    this.running = true;
    void this.load().finally(() => {
      this.running = false;
      if (this.again) {
        this.again = false;
        this.refresh();
      } else if (!this.stopped) {
        this.timer = setTimeout(() => this.refresh(), this.spec.everyMs);
      }
    });
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const undo of this.undos.splice(0)) undo();
  }

  private async load(): Promise<void> {
    const body = h('div', { className: 'body' });
    const undos: (() => void)[] = [];
    const width = Math.max(320, this.body.clientWidth || this.element.clientWidth - 32);
    try {
      const any = await this.spec.load(body, { width, dispose: (undo) => undos.push(undo) });
      if (!any) body.replaceChildren(h('p', { className: 'empty' }, this.spec.empty()));
      this.show(any ? 'ready' : 'empty', body, `updated ${new Date().toLocaleTimeString()}`, undos);
    } catch (err) {
      for (const undo of undos) undo();
      const error = err instanceof ApiError ? err : new ApiError(String(err), undefined);
      if (error.code === 'UNAUTHENTICATED') return this.signedOut(error);
      const why = error.code ? ` (${error.code})` : '';
      this.show(
        'error',
        h(
          'div',
          { className: 'body' },
          h('p', { className: 'error', role: 'alert' }, `Could not load: ${error.message}${why}`),
        ),
        'failed; trying again',
        [],
      );
    }
  }

  private show(state: string, body: HTMLElement, status: string, undos: (() => void)[]): void {
    for (const undo of this.undos) undo();
    this.undos = undos;
    this.body.replaceChildren(...body.childNodes);
    this.status.textContent = status;
    this.element.dataset.state = state;
    this.element.dataset.loads = String(++this.loads);
  }
}
