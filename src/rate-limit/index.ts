import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { rateLimited } from '../errors.js';

export interface LimitRule {
  name: string;
  points: number;
  durationSeconds: number;
}

/**
 * Rate limiting on rate-limiter-flexible: counters in memory by default, in
 * Redis when REDIS_URL is set so several instances share them.
 */
export class RateLimits {
  private readonly limiters = new Map<string, RateLimiterAbstract>();

  private constructor(private readonly redis?: Redis) {}

  /**
   * Connects to Redis before the server takes requests, so the first requests
   * already share counters; an unreachable Redis is logged and the per-instance
   * insurance counters take over until it answers.
   */
  static async create(redisUrl: string | undefined, logger?: Logger): Promise<RateLimits> {
    if (!redisUrl) return new RateLimits();
    const redis = new Redis(redisUrl, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    redis.on('error', () => {}); // reconnects by itself; each failed command falls back to insurance
    try {
      await redis.connect();
    } catch (error) {
      logger?.warn({ err: error }, 'Redis unreachable: rate limits count per instance until it answers');
    }
    return new RateLimits(redis);
  }

  private limiter(rule: LimitRule): RateLimiterAbstract {
    let limiter = this.limiters.get(rule.name);
    if (!limiter) {
      const options = { keyPrefix: `rl:${rule.name}`, points: rule.points, duration: rule.durationSeconds };
      limiter = this.redis
        ? new RateLimiterRedis({
            ...options,
            storeClient: this.redis,
            // A Redis outage must not lock operators out: fall back to per-instance counters.
            insuranceLimiter: new RateLimiterMemory(options),
          })
        : new RateLimiterMemory(options);
      this.limiters.set(rule.name, limiter);
    }
    return limiter;
  }

  /** Counts one hit; throws `rate_limited` (with Retry-After data) when the rule is exhausted. */
  consume(rule: LimitRule, key: string): Promise<void> {
    // Plain then() rather than async/await: this runs on every SDK request.
    return this.limiter(rule)
      .consume(key)
      .then(
        () => undefined,
        (rejection: unknown) => {
          throw rejection instanceof RateLimiterRes ? rateLimited(describe(rule, rejection)) : rejection;
        },
      );
  }

  /** Throws `rate_limited` if the rule is already exhausted for the key, without counting. */
  async check(rule: LimitRule, key: string): Promise<void> {
    const state = await this.limiter(rule).get(key);
    if (state && state.consumedPoints >= rule.points) throw rateLimited(describe(rule, state));
  }

  /** Counts one hit without throwing (an operation refused by the /graphql limits). */
  async penalise(rule: LimitRule, key: string): Promise<void> {
    await this.limiter(rule).penalty(key, 1);
  }

  /** Gives one counted hit back (an attempt counted up front that turned out fine). */
  async reward(rule: LimitRule, key: string): Promise<void> {
    await this.limiter(rule).reward(key, 1);
  }

  async reset(rule: LimitRule, key: string): Promise<void> {
    await this.limiter(rule).delete(key);
  }

  async close(): Promise<void> {
    if (this.redis?.status === 'ready') await this.redis.quit();
    else this.redis?.disconnect();
  }
}

function describe(rule: LimitRule, state: RateLimiterRes) {
  const retryAfter = Math.max(1, Math.ceil(state.msBeforeNext / 1000));
  return {
    limit: rule.points,
    remaining: Math.max(0, state.remainingPoints),
    retryAfter,
    reset: Math.ceil((Date.now() + state.msBeforeNext) / 1000),
  };
}
