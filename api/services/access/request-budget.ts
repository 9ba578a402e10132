// The request budget at the HTTP edge (core/budget.ts, warehouse/budgeted-warehouse.ts).
// Authentication (a key's plan, or the operator token) gives each request its budget
// (`req.budget`); the doors ask the analytics layer, the SQL sandbox and the export service
// under it, and an open route has none, so anything it asks of the engine is refused. The
// answer backstop: whatever a door sends passes its door's answer byte budget here, so a
// door that forgets its own check still cannot send more (its own check, with advice in its
// own words, normally answers first).
import { pipeline, Transform, type Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Budget, type AnswerMemory } from '../../../core/budget.ts';
import { AppError, Errors } from '../../../core/errors.ts';
import { formatBytes } from '../../../core/limits/answers.ts';
import { REQUEST_DEADLINE_GRACE_MS } from '../../../core/limits/http.ts';
import type { Plan } from '../../../core/plans.ts';
import { operatorBudget } from '../../../warehouse/budgeted-warehouse.ts';
import { installAnswerEdge, type EdgeStep } from '../answers/answer-edge.ts';
import { policyOf } from './route-policy.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's budget once authenticated (a key's plan, or the operator's); null before and on open routes. */
    budget: Budget | null;
  }
  interface FastifyReply {
    /** Its answer has reached the edge: the deadline's time-out no longer replaces it. */
    answering: boolean;
  }
}

/** Every request starts without a budget (so an open route reaches nothing); the answer bytes it held go back when its response ends. */
export function installRequestBudget(app: FastifyInstance): void {
  app.decorateRequest('budget', null);
  app.decorateReply('answering', false);
}

/** Give `req` the budget of `plan` at its door; every statement it causes from now on runs under it. */
export function grantBudget(req: FastifyRequest, plan: Plan, answerMemory?: AnswerMemory, reply?: FastifyReply): Budget {
  const budget = new Budget(plan, policyOf(req).door);
  budget.answerMemory = answerMemory;
  req.budget = budget;
  if (reply !== undefined) answerByDeadline(budget, reply);
  else req.raw.once('close', () => budget.releaseAnswers());
  return budget;
}

/**
 * The wall time holds for the answer too: a request whose handler is still waiting (on a
 * promise that never settles) a little after its deadline is answered with the time-out
 * error, so no client waits for good. A statement still running then has its own limit.
 * The answer bytes the request held go back once its response has ended, however it ended.
 */
function answerByDeadline(budget: Budget, reply: FastifyReply): void {
  if (!Number.isFinite(budget.deadline)) {
    reply.raw.once('close', () => budget.releaseAnswers());
    return;
  }
  const timer = setTimeout(
    () => {
      // Its answer is already on its way out (the edge runs it): a second reply would mix this
      // one's status with that one's body. One reply per request.
      if (reply.sent || reply.raw.headersSent || reply.answering) return;
      reply.log.error({ door: budget.door }, 'a request passed its wall time unanswered; answered with the time-out');
      void reply.send(
        new AppError(
          Errors.queryTimeout,
          `the request ran past its ${Math.round((budget.deadline - budget.start) / 1000)} s time budget and was abandoned; ask for less`,
        ),
      );
    },
    budget.deadline - Date.now() + REQUEST_DEADLINE_GRACE_MS,
  );
  timer.unref();
  // One listener for both: a close listener per concern costs the cheapest requests measurably.
  reply.raw.once('close', () => {
    clearTimeout(timer);
    budget.releaseAnswers();
  });
}

/** The answer edge's first step (answer-edge.ts): the reply is answering, so its deadline sends nothing more. */
export const answeringStep: EdgeStep = (_req, reply, payload) => {
  reply.answering = true;
  return payload;
};

/** The operator's budget (the highest plan's figures, no answer budget) for a request that passed the operator token. */
export function grantOperatorBudget(req: FastifyRequest): void {
  req.budget = operatorBudget();
}

const tooLargeMessage = (budget: Budget): string =>
  `the answer is larger than ${formatBytes(budget.answerBytes)}, the most one ${budget.door} answer may carry: ask for fewer records or a shorter range`;

/** The answer edge's step (answer-edge.ts) that cuts answers over the door's byte budget: a
 *  whole body is replaced by the error, a stream is ended abnormally. */
export const answerBudgetStep: EdgeStep = (req, reply, payload) => {
  const budget = req.budget;
  if (budget === null || !Number.isFinite(budget.answerBytes) || payload === null || payload === undefined) return payload;
  if (typeof payload === 'string' || Buffer.isBuffer(payload)) {
    const bytes = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength;
    if (bytes <= budget.answerBytes) return payload;
    req.log.error({ door: budget.door, bytes, budget: budget.answerBytes }, 'an answer passed its door budget without the door refusing it');
    reply.code(Errors.responseTooLarge.http).header('content-type', 'application/json; charset=utf-8').removeHeader('content-length');
    return JSON.stringify({ error: Errors.responseTooLarge.title, message: tooLargeMessage(budget) });
  }
  // pipeline, not pipe: an error on either side ends both (the client sees a cut answer).
  if (typeof (payload as Readable).pipe === 'function') return pipeline(payload as Readable, byteCap(budget), () => {});
  return payload;
};

/** The byte-budget backstop alone, as its own hook (an app without the rest of the edge). */
export function installAnswerBudget(app: FastifyInstance): void {
  installAnswerEdge(app, [answerBudgetStep]);
}

/** A pass-through that ends the stream with an error once more than the budget has passed. */
function byteCap(budget: Budget): Transform {
  let sent = 0;
  return new Transform({
    transform(chunk: Buffer | string, _enc, callback) {
      sent += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
      if (sent > budget.answerBytes) callback(new Error(tooLargeMessage(budget)));
      else callback(null, chunk);
    },
  });
}
