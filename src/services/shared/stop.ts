/**
 * A live stream's stop (a Repeater's), raced against what the stream waits for. Racing the Repeater's stop promise
 * directly would leave one reaction on it per wait for the stream's whole life; these races remove theirs when they
 * settle. The stream's own wakeup is told directly (`onStop`), so an idle stream holds no set of listeners (one is
 * made for a race).
 */
export class Stop {
  stopped = false;
  private listeners: Set<() => void> | undefined = undefined;

  constructor(stop: Promise<unknown>, onStop: () => void) {
    void stop.then(() => {
      this.stopped = true;
      onStop();
      for (const listener of this.listeners ?? []) listener();
      this.listeners = undefined;
    });
  }

  /** Settles as `promise` does, or with undefined as soon as the stream stops. */
  race<T>(promise: Promise<T>): Promise<T | undefined> {
    if (this.stopped) return Promise.resolve(undefined);
    return new Promise<T | undefined>((resolve, reject) => {
      const onStop = () => resolve(undefined);
      const listeners = (this.listeners ??= new Set());
      listeners.add(onStop);
      promise.then(
        (value) => {
          listeners.delete(onStop);
          resolve(value);
        },
        (err: unknown) => {
          listeners.delete(onStop);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }

  /** Waits `ms`, or until the stream stops. */
  delay(ms: number): Promise<void> {
    return this.race(new Promise<void>((r) => setTimeout(r, ms).unref())).then(() => undefined);
  }
}
