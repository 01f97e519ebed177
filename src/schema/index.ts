/** Imports every domain file (each adds its types and fields to the builder) and builds the schema. */
import { builder } from './builder.js';
import './users.js';
import './ops.js';
import './chat.js';
import './coordination.js';
import './geo.js';
import './telemetry.js';
import './access-logs.js';
import './documents.js';
import './ads.js';

export const schema = builder.toSchema({ sortSchema: false });
