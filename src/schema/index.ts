/** Imports every domain file (each adds its types and fields to the builder) and builds the schema. */
import { builder } from './builder.js';
import './users.js';
import './operations.js';
import './chats.js';
import './scheduled.js';
import './geo.js';
import './analytics.js';
import './access-logs.js';

export const schema = builder.toSchema({ sortSchema: false });
