/** What a long-running entry returns. */
export interface Stop {
  /** The graceful stop, on the first SIGTERM or SIGINT. */
  stop(signal: NodeJS.Signals): Promise<void>;
  /** On a second signal during `stop`: what must not be left behind, done at once. */
  stopNow?(): Promise<void>;
}

/**
 * How every entry (`npm start`, `npm run worker`, the command-line tools) runs: a start-up failure is one line
 * `<name>: <what to do>` and exit 1; a long-running entry returns its stop, which SIGTERM or SIGINT runs once before
 * exit 0 (exit 1 if the stop fails); a second signal during it runs `stopNow` instead and exits 1; a short entry
 * exits 0 when it is done.
 */
export function runProcess(name: string, main: () => Promise<Stop | void>): void {
  main().then(
    (running) => {
      if (!running) return process.exit(0);
      let signals = 0;
      const failed = (what: string) => (err: unknown) => {
        process.stderr.write(`${name}: ${what}: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exit(1);
      };
      const onSignal = (signal: NodeJS.Signals) => {
        if (++signals === 1) {
          running.stop(signal).then(() => signals === 1 && process.exit(0), failed('stopping failed'));
        } else if (signals === 2) {
          process.stderr.write(`${name}: second signal: stopping now\n`);
          (running.stopNow?.() ?? Promise.resolve()).then(() => process.exit(1), failed('stopping now failed'));
        }
      };
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
    },
    (err: unknown) => {
      process.stderr.write(`${name}: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
