/**
 * The heap a child process spends on sockets and subscriptions, read from outside through its inspector: a child
 * started with INSPECT listens on a free loopback port, and each reading forces full collections
 * (HeapProfiler.collectGarbage, twice) before it evaluates process.memoryUsage() there. Nothing in the product
 * serves it. With BENCH_HEAP_SNAPSHOTS=<dir>, a heap snapshot is written at each step too, to compare per
 * constructor (Chrome's Memory panel, Comparison view).
 */
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';
import { median, progress, type Child } from './processes.js';

/** The child's environment for an inspector on a free loopback port (it prints where on stderr). */
export const INSPECT = { NODE_OPTIONS: '--inspect=127.0.0.1:0' };

export interface HeapReading {
  /** process.memoryUsage() after full collections, in bytes. */
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

/** A Chrome DevTools Protocol session with a child started with INSPECT. */
export class HeapProbe {
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve(result: unknown): void; reject(err: Error): void }>();
  /** Where the chunks of the snapshot being taken go. */
  private snapshot: WriteStream | undefined;

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data: Buffer) => {
      const msg = JSON.parse(data.toString()) as {
        id?: number;
        result?: unknown;
        error?: { message: string };
        method?: string;
        params?: { chunk?: string };
      };
      if (msg.method === 'HeapProfiler.addHeapSnapshotChunk') this.snapshot?.write(msg.params!.chunk!);
      const call = msg.id === undefined ? undefined : this.waiting.get(msg.id);
      if (!call) return;
      this.waiting.delete(msg.id!);
      if (msg.error) call.reject(new Error(msg.error.message));
      else call.resolve(msg.result);
    });
    socket.on('close', () => {
      for (const call of this.waiting.values()) call.reject(new Error('inspector session closed'));
      this.waiting.clear();
    });
  }

  /** Connects to the inspector of `child`, which was started with INSPECT (its URL is on the child's stderr). */
  static async attach(child: Child): Promise<HeapProbe> {
    const url = /Debugger listening on (ws:\/\/\S+)/.exec(child.output())?.[1];
    if (!url) throw new Error(`${child.name}: no inspector URL in its output; was it started with INSPECT?`);
    const socket = new WebSocket(url, { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return new HeapProbe(socket);
  }

  private call<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = ++this.nextId;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  /** Two full collections (the second frees what finalizers of the first let go), then the process's figures. */
  async read(): Promise<HeapReading> {
    await this.call('HeapProfiler.collectGarbage');
    await this.call('HeapProfiler.collectGarbage');
    const { result } = await this.call<{ result: { value: string } }>('Runtime.evaluate', {
      expression: 'JSON.stringify(process.memoryUsage())',
      returnByValue: true,
    });
    const { heapUsed, external, arrayBuffers } = JSON.parse(result.value) as HeapReading;
    return { heapUsed, external, arrayBuffers };
  }

  /** Writes a heap snapshot of the child to `file`. */
  async writeSnapshot(file: string): Promise<void> {
    const out = createWriteStream(file);
    this.snapshot = out;
    try {
      await this.call('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    } finally {
      this.snapshot = undefined;
      await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    }
  }

  close(): void {
    this.socket.close();
  }
}

/** Bytes per socket and per subscription (heap, and external memory with the array buffers in it apart). */
export interface MemoryCost {
  baseline: HeapReading;
  perSocket: HeapReading;
  perSubscription: HeapReading;
}

const READINGS = 3;

/** The median of READINGS readings, each field apart. */
async function settled(probe: HeapProbe): Promise<HeapReading> {
  const readings: HeapReading[] = [];
  for (let i = 0; i < READINGS; i++) readings.push(await probe.read());
  return {
    heapUsed: median(readings.map((r) => r.heapUsed)),
    external: median(readings.map((r) => r.external)),
    arrayBuffers: median(readings.map((r) => r.arrayBuffers)),
  };
}

const per = (after: HeapReading, before: HeapReading, n: number, less?: HeapReading): HeapReading => ({
  heapUsed: (after.heapUsed - before.heapUsed - (less?.heapUsed ?? 0)) / n,
  external: (after.external - before.external - (less?.external ?? 0)) / n,
  arrayBuffers: (after.arrayBuffers - before.arrayBuffers - (less?.arrayBuffers ?? 0)) / n,
});

const times = (r: HeapReading, n: number): HeapReading => ({
  heapUsed: r.heapUsed * n,
  external: r.external * n,
  arrayBuffers: r.arrayBuffers * n,
});

/**
 * The memory of `target` (its child behind `probe`) before anything, after `openIdle` opened `sockets` idle sockets
 * (acknowledged, no operation), and after `subscribe` opened `subscriptions` live subscriptions over `busySockets`
 * more sockets: per idle socket, and per subscription less its busy socket's share (counted as an idle one).
 */
export async function memoryCost(
  target: string,
  probe: HeapProbe,
  o: {
    sockets: number;
    openIdle(): Promise<void>;
    subscriptions: number;
    busySockets: number;
    subscribe(): Promise<void>;
  },
): Promise<MemoryCost> {
  const dir = process.env.BENCH_HEAP_SNAPSHOTS;
  const step = async (name: string): Promise<HeapReading> => {
    const reading = await settled(probe);
    if (dir) {
      mkdirSync(dir, { recursive: true });
      const file = path.join(dir, `${target.replace(/\W+/g, '-').replace(/-$/, '')}-${name}.heapsnapshot`);
      await probe.writeSnapshot(file);
      progress(`  heap snapshot: ${file}`);
    }
    return reading;
  };
  const baseline = await step('0-baseline');
  await o.openIdle();
  const idle = await step('1-sockets');
  await o.subscribe();
  const busy = await step('2-subscriptions');
  const perSocket = per(idle, baseline, o.sockets);
  return {
    baseline,
    perSocket,
    perSubscription: per(busy, idle, o.subscriptions, times(perSocket, o.busySockets)),
  };
}
