/** Tests and benchmarks sign up many users from one address and measure throughput: rate limits are off unless one turns them on. */
export const LIMITS_OFF = { RATE_LIMIT_PER_MINUTE: '0', SIGNUPS_PER_MINUTE: '0', SIGNIN_FAILURES_PER_MINUTE: '0' };
