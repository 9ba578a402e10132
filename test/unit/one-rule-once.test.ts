// House rules of the request boundary (issue 36): each rule a request is checked by is
// written once, where every door reaches it, so that no door can check it its own way.
// The allow-lists are empty: a second copy of a rule fails here, naming the file.
import { describe, expect, it } from 'vitest';
import { serviceFiles, textOf } from '../support/source-scan.ts';

/** Service files (api/, core/, warehouse/, ingest/) whose text matches `re`. */
const filesMatching = (re: RegExp): string[] =>
  serviceFiles()
    .filter((f) => re.test(textOf(f)))
    .sort();

/** The files that are the doors and the layer they ask (where a request is checked). */
const DOOR_DIRS = /^api\/(catalog|doors\/(rest|rpc|graphql|mcp|exports)|analytics|services\/exports)\//;

describe('each request rule is written once', () => {
  it('the day range to seconds: daySpan in core/request-check.ts (the last second of a day, and dayStart, nowhere else)', () => {
    // The last second of a day is a calendar fact (core/vocabulary/calendar.ts, a home of numbers).
    expect(filesMatching(/86_?399|\+ 86_?400\b|T00:00:00Z`\) \/ 1000/)).toEqual(['core/vocabulary/calendar.ts']);
    expect(filesMatching(/LAST_SECOND_OF_DAY/).filter((f) => !f.startsWith('core/vocabulary/'))).toEqual(['core/request-check.ts']);
    expect(filesMatching(/[^.\w]dayStart\(/).filter((f) => !f.startsWith('core/vocabulary/'))).toEqual(['core/request-check.ts']);
    // No door converts or words a day itself, REST's preValidation included: the one check does, before its schema.
    expect(filesMatching(/\bdaySpan\(/)).toEqual(['core/request-check.ts']);
  });

  it('the protocol check: core/protocol-scope.ts words an unknown protocol, and only the facade reads the active list', () => {
    expect(filesMatching(/unknown protocol/).filter((f) => DOOR_DIRS.test(f) || f.startsWith('core/'))).toEqual(['core/protocol-scope.ts']);
    expect(filesMatching(/\.activeNames\(\)/).filter((f) => DOOR_DIRS.test(f))).toEqual(['api/analytics/analytics.ts']);
  });

  it('the bucket count: checkBuckets alone compares with MAX_ACTIVITY_BUCKETS, run by one declared rule', () => {
    expect(filesMatching(/>\s*MAX_ACTIVITY_BUCKETS/)).toEqual(['api/analytics/question/granularity.ts']);
    // bucketsAtMost (getProtocolActivity's interval, timeSeries' granularity): the facade does not count again.
    expect(filesMatching(/\bcheckBuckets\(/).filter((f) => f !== 'api/analytics/question/granularity.ts')).toEqual(['api/catalog/open-questions.ts']);
  });

  it("GraphQL's open questions hand their protocols and days to the one check", () => {
    // transactions, timeSeries, failedTransactions, queryComplexity: declared in api/catalog/open-questions.ts.
    expect(filesMatching(/\bdaySpan\(/).filter((f) => f.startsWith('api/doors/graphql/'))).toEqual([]);
    // Their list filters' items are held to the vocabulary's primitives by the one check's schema: no hand copy of a primitive's rule.
    expect(filesMatching(/\bbreaksRule\b|FILTER_LISTS\[/).filter((f) => f.startsWith('api/doors/'))).toEqual([]);
  });

  it('cross-field rules are values of core/request-rules.ts, run and documented from one declaration', () => {
    // No rule written as a JSON literal for the documents beside a check coded by hand.
    expect(filesMatching(/rule: '(ordered|sumAtMost|spanAtMost)'/)).toEqual(['core/request-rules.ts']);
    expect(filesMatching(/'x-cross-field-rules'/).filter((f) => /^api\/(catalog|doors\/(rest|rpc))\//.test(f))).toEqual([]);
  });

  it('bodies (exports, SQL, executions) and the subscription are declared requests: no door converts days or resolves protocols itself', () => {
    // The days of an export are converted by the one check; the writer reads the seconds it stored.
    expect(filesMatching(/\bdaySpan\(/).filter((f) => /^api\/(exports|sql|graphql\/subscriptions)\//.test(f))).toEqual([]);
    // Protocols are resolved by the facade or the one check, nowhere else.
    expect(filesMatching(/\bresolveProtocols\(/).filter((f) => f !== 'core/protocol-scope.ts')).toEqual([
      'api/analytics/analytics.ts',
      'core/request-check.ts',
    ]);
    // A body's rules are values of request-rules, run by the one check and shown in the documents.
    expect(filesMatching(/rule: '(sumEquals|subsetOf|onlyWith|notValue)'/)).toEqual(['core/request-rules.ts']);
    // Each body's shape is declared once: the export body, the SQL body's format, the subscription's list.
    expect(filesMatching(/has no field "\{name\}"; fields: format, filters/)).toEqual(['api/services/exports/export-request.ts']);
    // MCP's run_sql included: its arguments are the declared SQL request.
    expect(filesMatching(/must be "json" or "csv"/)).toEqual(['api/services/sql/query-request.ts']);
    expect(filesMatching(/the list is empty; name at least one protocol/)).toEqual(['api/doors/graphql/subscriptions/schema.ts']);
  });

  it("GraphQL's open questions: groupBy, metrics, sort, pagination, record ranges, status and success are their declared requests'", () => {
    // Relay's page rules are declared once (exportJobs runs them too); no door words them.
    expect(filesMatching(/cannot be used together/)).toEqual(['api/catalog/open-questions.ts']);
    // A repeated item, bounds out of order, success against status: rules of core, nowhere else.
    expect(filesMatching(/is listed twice/)).toEqual(['core/request-check.ts', 'core/request-rules.ts']);
    expect(filesMatching(/is above its max|\bcontradicts\b/)).toEqual(['core/request-rules.ts']);
    // The door's argument module maps names; pagination-args.ts is gone.
    expect(filesMatching(/function (directionOf|pageOf|keysOf|metricsOf)\b.*\bthrow\b/s).filter((f) => f.startsWith('api/doors/graphql/'))).toEqual([]);
    expect(serviceFiles().filter((f) => f.endsWith('pagination-args.ts'))).toEqual([]);
  });

  it('GraphQL fields declare the filters they take; no hand-kept list of refused ones', () => {
    expect(filesMatching(/\brefuse\(\s*\w+\s*,\s*\[/)).toEqual([]);
  });

  it('one formatError for every GraphQL operation (queries, mutations, subscriptions)', () => {
    expect(filesMatching(/function formatError\b/)).toEqual(['api/doors/graphql/errors.ts']);
  });
});
