/**
 * This process's heap after full collections (gc exposed at run time), for tests that show what a hostile or
 * stalled client can make the gateway hold: compare a reading before with one after, against a bound far from both.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** process.memoryUsage().heapUsed after two full collections. */
export function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
