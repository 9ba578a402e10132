// Operator view of the protocol registry: list every protocol, activate or deactivate one.
import type { FastifyInstance } from 'fastify';
import { AppError, Errors, notFound } from '../../../core/errors.ts';
import type { ProtocolRegistry } from '../../../warehouse/protocol-registry.ts';

export async function protocolRoutes(app: FastifyInstance, opts: { registry: ProtocolRegistry; onChange: () => void }): Promise<void> {
  app.get('/admin/protocols', async () => ({ data: await opts.registry.list() }));

  app.patch<{ Params: { name: string }; Body: { active?: unknown } }>('/admin/protocols/:name', async (req) => {
    const active = req.body?.active;
    if (typeof active !== 'boolean') {
      throw new AppError(Errors.invalidParams, 'body must be {"active": true|false}', { field: 'active' });
    }
    const updated = await opts.registry.setActive(req.params.name, active);
    if (!updated) throw notFound(`unknown protocol "${req.params.name}"`);
    opts.onChange();
    return updated;
  });
}
