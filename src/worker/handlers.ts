/** The product's task handlers: what each queue's tasks do, in terms of the services. */
import type { Services } from '../services/index.js';
import { SEND_SCHEDULED_MESSAGE } from '../services/scheduled.js';
import type { TaskHandler } from './worker.js';

export function productHandlers(services: Services): TaskHandler[] {
  return [
    {
      queue: services.scheduled.queueName,
      name: SEND_SCHEDULED_MESSAGE,
      run: (args) => services.scheduled.deliver((args as { id: string }).id),
    },
  ];
}
