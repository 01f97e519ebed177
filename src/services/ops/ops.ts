/**
 * Operations control (the book's chapter 5): the maintenance switch and per-component configuration.
 * Every process re-reads the switch at most once a second (the book's `is_under_maintenance`), so all
 * instances see a change within about a second while a burst of mutations costs one GET per second.
 */
import type { Logger } from 'pino';
import type { OpsCommands } from '../../redis/ops/commands.js';
import { badInput } from '../../errors.js';

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;
export const CONFIG_MAX_BYTES = 64 * 1024;
/** Deepest nesting of arrays and objects in a configuration value. */
export const CONFIG_MAX_DEPTH = 32;
const MAINTENANCE_RECHECK_MS = 1000;

export class OpsService {
  private maintenance: { value: boolean; readAt: number } | undefined;
  private pending: Promise<boolean> | undefined;

  private readonly commands: OpsCommands;
  private readonly log: Logger;

  constructor(deps: { commands: OpsCommands; log: Logger }) {
    ({ commands: this.commands, log: this.log } = deps);
  }

  /** Whether Redis answers a PING within `timeoutMs` (what /readyz reports). */
  ready(input: { timeoutMs: number }): Promise<boolean> {
    return this.commands.ping(input);
  }

  /**
   * Whether maintenance mode is on, read at most once per MAINTENANCE_RECHECK_MS. When the read fails (the flag's
   * master is failing over, on a cluster), the last value read stands: writes to the other masters go on.
   */
  async isUnderMaintenance(): Promise<boolean> {
    const known = this.maintenance;
    if (known && Date.now() - known.readAt < MAINTENANCE_RECHECK_MS) return known.value;
    this.pending ??= this.commands
      .maintenance()
      .then(
        (value) => {
          this.maintenance = { value, readAt: Date.now() };
          return value;
        },
        (err: unknown) => {
          if (!known) throw err;
          this.log.warn({ err }, 'maintenance flag unreadable; keeping the last value read');
          return known.value;
        },
      )
      .finally(() => (this.pending = undefined));
    return this.pending;
  }

  async setMaintenance({ enabled }: { enabled: boolean }): Promise<boolean> {
    await this.commands.setMaintenance({ enabled });
    this.maintenance = { value: enabled, readAt: Date.now() };
    return enabled;
  }

  async config(input: Component): Promise<unknown> {
    const raw = await this.commands.config(checkComponent(input));
    return raw === null ? null : (JSON.parse(raw) as unknown);
  }

  async setConfig(input: Component & { value: unknown }): Promise<unknown> {
    const component = checkComponent(input);
    if (depthExceeds(input.value, CONFIG_MAX_DEPTH))
      throw badInput('value', `must nest arrays and objects at most ${CONFIG_MAX_DEPTH} deep`);
    const json = JSON.stringify(input.value);
    if (Buffer.byteLength(json) > CONFIG_MAX_BYTES)
      throw badInput('value', `must be at most ${CONFIG_MAX_BYTES} bytes of JSON`);
    await this.commands.setConfig({ ...component, json });
    return input.value;
  }
}

/** A component's configuration is named by its type and its name (the book's config:<type>:<component>). */
interface Component {
  type: string;
  component: string;
}

function checkComponent({ type, component }: Component): Component {
  if (!NAME.test(type)) throw badInput('type', 'must be 1 to 64 characters of A-Z, a-z, 0-9, "_", "." or "-"');
  if (!NAME.test(component))
    throw badInput('component', 'must be 1 to 64 characters of A-Z, a-z, 0-9, "_", "." or "-"');
  return { type, component };
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
