/**
 * graphql-ws over `ws`: the protocol is graphql-ws's makeServer, the sockets are handled here instead of by its
 * useServer, because a send must not wait forever. graphql-ws awaits each send, so a client that stops reading
 * holds its subscriptions still once the kernel's buffers are full; here a socket with a send that has not
 * completed for `sendTimeoutMs` is closed with 1013 (the close frame queues behind the unsent data: a client that
 * reads again gets it and resumes from its read positions; one that never does is cut off after a grace period).
 */
import { CloseCode, handleProtocols, makeServer, type ServerOptions } from 'graphql-ws';
import type { Logger } from 'pino';
import type { WebSocket, WebSocketServer } from 'ws';

/** Close code for a socket that did not take a send within WS_SEND_TIMEOUT_MS ("Try Again Later"). */
export const CLOSE_SLOW_CONSUMER = 1013;
/** How long a slow consumer gets to read up to the close frame before it is cut off. */
const SLOW_CONSUMER_GRACE_MS = 5000;
/** The server pings this often; a socket that has not answered the previous ping is cut off. */
const KEEP_ALIVE_MS = 12_000;
/** On dispose, how long a socket has to answer the 1001 close frame before it is cut off. */
const CLOSE_GRACE_MS = 1000;

/**
 * What an operation may need of its socket. Not the upgrade request: a socket would hold it (headers and all) for
 * its whole life, for the one address operations read.
 */
export interface SocketExtra {
  socket: WebSocket;
  /** The client's address (undefined when the connection was gone before it was served). */
  address: string | undefined;
}

/**
 * One socket's state: sends handed to it and not yet completed, and when the last one completed (or the first
 * began); whether it answered the last keep-alive ping.
 */
interface SocketState {
  pending: number;
  since: number;
  slow: boolean;
  answered: boolean;
}

export function serveGraphQLOverWebSocket<P extends Record<string, unknown> | undefined, E extends SocketExtra>(
  options: ServerOptions<P, E>,
  wss: WebSocketServer,
  o: { sendTimeoutMs: number; log: Logger },
): { dispose(): Promise<void> } {
  const server = makeServer(options);
  const states = new WeakMap<WebSocket, SocketState>();
  wss.options.handleProtocols = handleProtocols;

  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const socket of wss.clients) {
        const s = states.get(socket);
        if (!s || s.slow || s.pending === 0 || now - s.since < o.sendTimeoutMs) continue;
        s.slow = true;
        o.log.warn(
          { pending: s.pending, buffered: socket.bufferedAmount },
          'websocket closed: the client reads too slowly',
        );
        socket.close(CLOSE_SLOW_CONSUMER, 'Try again later: the client reads too slowly');
        setTimeout(() => socket.terminate(), SLOW_CONSUMER_GRACE_MS).unref();
      }
    },
    Math.min(1000, Math.ceil(o.sendTimeoutMs / 4)),
  );
  sweep.unref();

  // One timer and shared listeners for every socket, where a timer and closures per socket cost its heap.
  const keepAlive = setInterval(() => {
    for (const socket of wss.clients) {
      const s = states.get(socket);
      if (!s) continue;
      if (!s.answered) {
        socket.terminate();
        continue;
      }
      s.answered = false;
      socket.ping();
    }
  }, KEEP_ALIVE_MS);
  keepAlive.unref();
  function onPong(this: WebSocket) {
    const s = states.get(this);
    if (s) s.answered = true;
  }
  function onError(this: WebSocket, err: Error) {
    o.log.warn({ err }, 'websocket error');
    this.close(CloseCode.InternalServerError, 'Internal server error');
  }

  wss.on('connection', (socket, request) => {
    const s: SocketState = { pending: 0, since: Date.now(), slow: false, answered: true };
    states.set(socket, s);
    socket.on('error', onError);
    socket.on('pong', onPong);

    const closed = server.opened(
      {
        protocol: socket.protocol,
        send: (data) =>
          new Promise<void>((resolve, reject) => {
            if (socket.readyState !== socket.OPEN) return resolve();
            if (s.pending++ === 0) s.since = Date.now();
            socket.send(data, (err) => {
              s.pending--;
              s.since = Date.now();
              if (err) reject(err);
              else resolve();
            });
          }),
        close: (code, reason) => socket.close(code, reason),
        onMessage: (handle) =>
          socket.on('message', (data: Buffer) => {
            handle(data.toString()).catch((err: unknown) => {
              o.log.error({ err }, 'websocket message failed');
              socket.close(CloseCode.InternalServerError, 'Internal server error');
            });
          }),
      },
      { socket, address: request.socket.remoteAddress } as E,
    );
    socket.on('close', (code, reason) => void closed(code, reason.toString()));
  });

  return {
    /** Closes every socket with 1001, cutting off those that do not answer within CLOSE_GRACE_MS. */
    async dispose() {
      clearInterval(sweep);
      clearInterval(keepAlive);
      const sockets = [...wss.clients];
      const closed = sockets.map((socket) => new Promise<void>((resolve) => socket.once('close', () => resolve())));
      for (const socket of sockets) socket.close(1001, 'Going away');
      const grace = setTimeout(() => sockets.forEach((socket) => socket.terminate()), CLOSE_GRACE_MS);
      await Promise.all(closed);
      clearTimeout(grace);
      wss.removeAllListeners('connection');
      await new Promise<void>((resolve, reject) => wss.close((err) => (err ? reject(err) : resolve())));
    },
  };
}
