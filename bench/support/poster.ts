/** The benches' GraphQL client, without side effects on import (bench/support/processes.ts re-exports it). */
import net from 'node:net';

/**
 * A POST of a raw JSON body to `${baseUrl}/graphql` with `auth` headers: the body of the answer, thrown on a non-200 or
 * errors. It writes each request in one `write` on a keep-alive connection of its own pool (one per request in
 * flight) and reads the answer by its Content-Length, which the gateway gives every JSON answer; any other framing
 * (chunked), a connection closed early or a malformed head is thrown. node:http's client cost this process 110 µs of
 * CPU per `{ me }` at 1 in flight and 76 at 50 (this one 34 and 28) and added 0.09 ms to a request's p50, on the
 * same two cores as the gateway it measures (undici's `fetch`, before it, cost 0.41-0.51 ms): the rows measure the
 * gateway, not the client.
 */
export function rawPoster(baseUrl: string, auth: Record<string, string>) {
  const { hostname, port } = new URL(baseUrl);
  const headers = Object.entries(auth)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  const head = `POST /graphql HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/json\r\n${headers}`;
  const idle: net.Socket[] = [];
  const connect = () => {
    const socket = net.connect(Number(port), hostname).setNoDelay(true);
    // an idle connection the gateway closes (its keep-alive timeout) leaves the pool
    socket.on('close', () => idle.includes(socket) && idle.splice(idle.indexOf(socket), 1));
    socket.on('error', () => undefined); // reported to the request in flight by its own listener, or dropped when idle
    return socket;
  };
  return (body: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const socket = idle.pop() ?? connect();
      let received: Buffer = Buffer.alloc(0);
      let settled = false;
      const done = (err: Error | null, text?: string) => {
        if (settled) return;
        settled = true;
        socket.off('data', onData).off('close', onClose).off('error', onError);
        if (err) {
          socket.destroy();
          reject(err);
        } else {
          idle.push(socket);
          resolve(text!);
        }
      };
      const onError = (err: Error) => done(err);
      const onClose = () => done(new Error(`connection closed before the answer (${received.length} bytes)`));
      const onData = (chunk: Buffer) => {
        received = received.length ? Buffer.concat([received, chunk]) : chunk;
        const headEnd = received.indexOf('\r\n\r\n');
        if (headEnd < 0) return;
        const lines = received.subarray(0, headEnd).toString('latin1').split('\r\n');
        const status = /^HTTP\/1\.1 (\d{3}) /.exec(lines[0]!)?.[1];
        const length = lines
          .find((l) => /^content-length:/i.test(l))
          ?.slice(15)
          .trim();
        if (!status || !length || !/^\d+$/.test(length))
          return done(new Error(`not an answer framed by Content-Length: ${lines.join(' | ').slice(0, 300)}`));
        if (received.length < headEnd + 4 + Number(length)) return;
        const text = received.subarray(headEnd + 4, headEnd + 4 + Number(length)).toString('utf8');
        if (status !== '200' || text.includes('"errors"')) done(new Error(`HTTP ${status}: ${text.slice(0, 300)}`));
        else done(null, text);
      };
      socket.on('data', onData).on('close', onClose).on('error', onError);
      // a connection that closed without this process noticing yet fails the write
      socket.write(`${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`, (err) => err && done(err));
    });
}
