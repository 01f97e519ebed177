/** Authorization checks shared by every resolver, HTTP and WebSocket alike. */
import type { Context, Viewer } from '../context.js';
import { forbidden, unauthenticated } from '../errors.js';

export function requireViewer(ctx: Context): Viewer {
  if (!ctx.viewer) throw unauthenticated();
  return ctx.viewer;
}

export function requireAdmin(ctx: Context): Viewer {
  const viewer = requireViewer(ctx);
  if (!viewer.isAdmin) throw forbidden('only an admin may do this');
  return viewer;
}
