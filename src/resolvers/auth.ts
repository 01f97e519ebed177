/** Authorization checks shared by every resolver, HTTP and WebSocket alike. */
import type { Context, Viewer } from '../context.js';
import { forbidden, unauthenticated } from '../errors.js';

export function requireViewer(ctx: Context): Viewer {
  if (!ctx.viewer) throw unauthenticated(ctx.rejected ?? undefined);
  return ctx.viewer;
}

/** The viewer, when they hold an admin grant now (asked of Redis each time: a revocation counts at once). */
export async function requireAdmin(ctx: Context): Promise<Viewer> {
  const viewer = requireViewer(ctx);
  if (!(await ctx.services.admins.isAdmin({ username: viewer.username }))) throw forbidden('only an admin may do this');
  return viewer;
}

/** The same, asked once per operation (through its DataLoader) however many fields ask: for admin-only fields. */
export async function requireAdminField(ctx: Context): Promise<Viewer> {
  const viewer = requireViewer(ctx);
  if (!(await ctx.loaders.isAdmin.load(viewer.username))) throw forbidden('only an admin may see this field');
  return viewer;
}
