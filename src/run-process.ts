/**
 * How every entry (`npm start`, `npm run worker`, the command-line tools) runs: a start-up failure is one line
 * `<name>: <what to do>` and exit 1; a long-running entry returns its stop, which SIGTERM or SIGINT runs once before
 * exit 0 (exit 1 if the stop fails); a short one exits 0 when it is done.
 */
export function runProcess(
  name: string,
  main: () => Promise<((signal: NodeJS.Signals) => Promise<void>) | void>,
): void {
  main().then(
    (stop) => {
      if (!stop) return process.exit(0);
      let stopping = false;
      const onSignal = (signal: NodeJS.Signals) => {
        if (stopping) return;
        stopping = true;
        stop(signal).then(
          () => process.exit(0),
          (err: unknown) => {
            process.stderr.write(`${name}: stopping failed: ${err instanceof Error ? err.message : String(err)}\n`);
            process.exit(1);
          },
        );
      };
      process.once('SIGTERM', onSignal);
      process.once('SIGINT', onSignal);
    },
    (err: unknown) => {
      process.stderr.write(`${name}: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
