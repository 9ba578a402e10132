// Polls of SQL executions (GET /v1/query/executions/{id}; docs/rest-and-sql.md, "SQL
// executions"): cheap, not free. A poll reads only memory, so it does not spend the plan's
// request window, but it counts against a window of its own, EXECUTION_POLLS_PER_MINUTE per
// key (one free key made 3,941 polls a second when they were free); past it, 429 with
// Retry-After. A poll of an id this key has no execution under is charged like any request
// besides (execution-routes.ts), so guessing ids spends the plan's window.
import type { FastifyRequest } from 'fastify';
import { AppError, Errors } from '../../../core/errors.ts';
import { EXECUTION_POLLS_PER_MINUTE } from '../../../core/limits/sql.ts';
import { PLAN_LIMITS, type Plan } from '../../../core/plans.ts';
import type { Access } from './access.ts';

/**
 * Polls of an SQL execution's state, which read nothing but memory: charged against a poll
 * window of their own (EXECUTION_POLLS_PER_MINUTE) instead of the plan's request window.
 */
export const isExecutionPoll = (method: string, route: string): boolean => method === 'GET' && route === '/v1/query/executions/:id';

/** Count one poll of `key`'s; throws the 429 past its poll window. The answer's X-RateLimit-*
 *  are the key's request window, read without spending it. */
export async function chargeExecutionPoll(access: Access, req: FastifyRequest, key: { id: string; plan: Plan }): Promise<void> {
  const polls = await access.limiter.consume(`poll:${key.id}`, EXECUTION_POLLS_PER_MINUTE, 1);
  req.rateLimit = { ...(await access.limiter.peek(`key:${key.id}`, PLAN_LIMITS[key.plan])), plan: key.plan, allowed: true };
  if (polls.allowed) return;
  access.metrics.rateLimitRejections.inc({ plan: key.plan });
  throw new AppError(
    Errors.rateLimited,
    `Too many polls: ${EXECUTION_POLLS_PER_MINUTE} polls of SQL executions per minute per API key; poll about once a second, and retry after ${polls.retryAfterSeconds} s`,
    { retryAfterSeconds: polls.retryAfterSeconds },
  );
}
