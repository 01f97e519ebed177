/** What the operator's commands (src/cli/) share. */

/**
 * Writes `text` and waits until the stream took it: a long answer neither piles up in memory nor is cut short by the
 * exit that follows (a pipe's writes are asynchronous).
 */
export function print(stream: NodeJS.WriteStream, text: string): Promise<void> {
  return new Promise((resolve, reject) => stream.write(text, (err) => (err ? reject(err) : resolve())));
}
