// The answer edge: what every answer gets on its way out (rate-limit figures and the in-flight
// slot, the door's byte budget, X-Stats-*, the request id, framing rules, freshness and caching
// headers), in ONE onSend pass over steps the concerns' own modules export. One hook instead of
// one per concern: each hook is a step of Fastify's hook runner (a closure and a `next` per
// answer), which the cheapest answers measurably feel (bench/RESULTS.md, "Serving speed: one
// pass at the answer edge"). The steps run in the order given, each seeing the answer as the
// ones before left it, exactly as separate hooks installed in that order did. Compression is
// not a step: it must see the answer after every door's own onSend hooks (compression.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * One concern of the edge: returns the payload to send on (the one given, or a replacement),
 * or, when it must wait (a keyless answer's address figures, a cold registry), a promise of
 * it; the steps after it then run once it settles. Synchronous otherwise: no promise per answer.
 */
export type EdgeStep = (req: FastifyRequest, reply: FastifyReply, payload: unknown) => unknown;

type Done = (err: Error | null, payload?: unknown) => void;

function run(steps: readonly EdgeStep[], from: number, req: FastifyRequest, reply: FastifyReply, payload: unknown, done: Done): void {
  let current = payload;
  for (let i = from; i < steps.length; i++) {
    let out: unknown;
    try {
      out = steps[i]!(req, reply, current);
    } catch (err) {
      done(err as Error);
      return;
    }
    // A payload is a string, a buffer, a stream or nothing, never a promise: a promise is a step waiting.
    if (out instanceof Promise) {
      out.then(
        (p: unknown) => run(steps, i + 1, req, reply, p, done),
        (err: Error) => done(err),
      );
      return;
    }
    current = out;
  }
  done(null, current);
}

/** Install `steps` as one root onSend hook (before the routes, so it covers all of them). */
export function installAnswerEdge(app: FastifyInstance, steps: readonly EdgeStep[]): void {
  app.addHook('onSend', (req, reply, payload, done) => run(steps, 0, req, reply, payload, done));
}
