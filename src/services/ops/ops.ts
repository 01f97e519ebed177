/**
 * Operations control (the book's chapter 5): the maintenance switch and per-component configuration.
 * Every process re-reads the switch at most once a second (the book's `is_under_maintenance`), so all
 * instances see a change within about a second while a burst of mutations costs one GET per second.
 */
import { isReady, type RedisClient } from '../../redis/clients.js';
import type { OpsKeys } from '../../redis/ops/keys.js';
import { badInput } from '../../errors.js';

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;
export const CONFIG_MAX_BYTES = 64 * 1024;
/** Deepest nesting of arrays and objects in a configuration value. */
export const CONFIG_MAX_DEPTH = 32;
const MAINTENANCE_RECHECK_MS = 1000;

export class OpsService {
  private maintenance: { value: boolean; readAt: number } | undefined;
  private pending: Promise<boolean> | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: OpsKeys,
  ) {}

  /** Whether Redis answers a PING within `ms` (what /readyz reports). */
  async ready(ms: number): Promise<boolean> {
    if (!isReady(this.redis)) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    try {
      return await Promise.race([this.redis.ping().then((r) => r === 'PONG'), timeout]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  async isUnderMaintenance(): Promise<boolean> {
    if (this.maintenance && Date.now() - this.maintenance.readAt < MAINTENANCE_RECHECK_MS) {
      return this.maintenance.value;
    }
    this.pending ??= this.redis
      .get(this.keys.maintenance())
      .then((v) => {
        this.maintenance = { value: v === '1', readAt: Date.now() };
        return v === '1';
      })
      .finally(() => (this.pending = undefined));
    return this.pending;
  }

  async setMaintenance(enabled: boolean): Promise<boolean> {
    if (enabled) await this.redis.set(this.keys.maintenance(), '1');
    else await this.redis.del(this.keys.maintenance());
    this.maintenance = { value: enabled, readAt: Date.now() };
    return enabled;
  }

  async config(type: string, component: string): Promise<unknown> {
    const raw = await this.redis.get(this.configKey(type, component));
    return raw === null ? null : (JSON.parse(raw) as unknown);
  }

  async setConfig(type: string, component: string, value: unknown): Promise<unknown> {
    const key = this.configKey(type, component);
    if (depthExceeds(value, CONFIG_MAX_DEPTH))
      throw badInput('value', `must nest arrays and objects at most ${CONFIG_MAX_DEPTH} deep`);
    const raw = JSON.stringify(value);
    if (Buffer.byteLength(raw) > CONFIG_MAX_BYTES)
      throw badInput('value', `must be at most ${CONFIG_MAX_BYTES} bytes of JSON`);
    await this.redis.set(key, raw);
    return value;
  }

  private configKey(type: string, component: string): string {
    if (!NAME.test(type)) throw badInput('type', 'must be 1 to 64 characters of A-Z, a-z, 0-9, "_", "." or "-"');
    if (!NAME.test(component))
      throw badInput('component', 'must be 1 to 64 characters of A-Z, a-z, 0-9, "_", "." or "-"');
    return this.keys.config(type, component);
  }
}

/** Whether `value` nests arrays and objects deeper than `max` (iterative: any depth is safe to ask about). */
function depthExceeds(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [v, depth] = item;
    if (typeof v !== 'object' || v === null) continue;
    if (depth + 1 > max) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}
