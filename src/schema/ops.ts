import * as resolvers from '../resolvers/ops.js';
import { builder } from './builder.js';
import { CONFIG_MAX_BYTES, CONFIG_MAX_DEPTH } from '../services/ops/ops.js';

builder.queryFields((t) => ({
  maintenance: t.field({
    type: 'Boolean',
    description: 'Whether maintenance mode is on (mutations paused).',
    resolve: resolvers.maintenance,
  }),
  config: t.withAuth({ admin: true }).field({
    type: 'JSON',
    nullable: true,
    description: 'Admin: the configuration of one component, null when none is set.',
    args: { type: t.arg.string({ required: true }), component: t.arg.string({ required: true }) },
    resolve: resolvers.config,
  }),
}));

builder.mutationFields((t) => ({
  setMaintenance: t.withAuth({ admin: true }).field({
    type: 'Boolean',
    description: 'Admin: turns maintenance mode on or off; every gateway instance follows within about a second.',
    args: { enabled: t.arg.boolean({ required: true }) },
    resolve: resolvers.setMaintenance,
  }),
  setConfig: t.withAuth({ admin: true }).field({
    type: 'JSON',
    description: `Admin: stores the configuration of one component (at most ${CONFIG_MAX_BYTES / 1024} KiB of JSON, nested at most ${CONFIG_MAX_DEPTH} deep) and returns it.`,
    args: {
      type: t.arg.string({ required: true }),
      component: t.arg.string({ required: true }),
      value: t.arg({ type: 'JSON', required: true }),
    },
    resolve: resolvers.setConfig,
  }),
}));
