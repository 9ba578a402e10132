// Headers that authenticate a test request. Every interface test sends these, so the
// tests keep passing once authentication guards every endpoint.
import type { FastifyInstance } from 'fastify';
import { ADMIN_TOKEN } from './services.ts';

export type Plan = 'free' | 'x402' | 'enterprise';

export async function apiKeyHeaders(app: FastifyInstance, plan: Plan = 'enterprise'): Promise<Record<string, string>> {
  // Until API keys exist (the access issue) no header is needed.
  void app;
  void plan;
  void ADMIN_TOKEN;
  return {};
}
