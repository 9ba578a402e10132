// A bare app (one door's routes, without the access hooks) whose every request runs under
// the operator's budget, as authentication behind the operator token gives it: doors bind
// `req.budget`, and a request without one reaches nothing (warehouse/budgeted-warehouse.ts).
import type { FastifyInstance } from 'fastify';
import { operatorBudget } from '../../warehouse/budgeted-warehouse.ts';
import '../../api/services/access/request-budget.ts';

export function asOperator(app: FastifyInstance): FastifyInstance {
  app.decorateRequest('budget', null);
  app.addHook('onRequest', (req, _reply, done) => {
    req.budget = operatorBudget();
    done();
  });
  return app;
}
