// What a finished job writes beside its data files: manifest.json (machine-readable: files
// with rows, bytes and sha256, the schema, filters, seeds and data watermark) and README.md,
// a dataset card whose YAML header lets common loaders (Hugging Face `datasets`, which reads
// `configs[].data_files`) find the splits as named files.
import { FORMAT_FILES, SPLIT_NAMES, type ExportSpec } from './export-config.ts';
import type { JobRecord } from './job-store.ts';

export const MANIFEST = 'manifest.json';
export const DATASET_CARD = 'README.md';

/** Loader names of the splits: `validation` is the name loaders expect for `val`. */
const LOADER_SPLIT = { train: 'train', test: 'test', val: 'validation' } as const;

/** How rows were assigned to splits and samples, in words a reader can recompute. */
const HASHING = 'split: h = cityHash64(signature, toUInt64(seed)) % 2^32; train if h < round(train * 2^32), test if h < round((train + test) * 2^32), else val. '
  + 'sampling: kept if cityHash64(signature, toUInt64(sampling.seed)) % 2^32 < round(rate * 2^32).';

function configOf(spec: ExportSpec): Record<string, unknown> {
  const common = { format: spec.format, sampling: spec.sampling, splits: spec.splits, seed: spec.seed };
  return spec.kind === 'filters' ? { kind: 'filters', ...common, filters: spec.filters, columns: spec.columns } : { kind: 'sql', ...common, query: spec.query };
}

export function manifestOf(job: JobRecord): Record<string, unknown> {
  const perSplit = Object.fromEntries(SPLIT_NAMES.map((s) => [s, job.files.filter((f) => f.split === s).reduce((a, f) => a + f.rows, 0)]));
  return {
    id: job.id,
    createdAt: job.createdAt,
    completedAt: job.finishedAt,
    config: configOf(job.spec),
    hashing: HASHING,
    schema: job.schema,
    watermark: job.work === null ? null : {
      ingestedAt: job.work.ingestedAt,
      maxBlockTime: job.work.maxBlockTime,
    },
    rows: job.files.reduce((a, f) => a + f.rows, 0),
    bytes: job.files.reduce((a, f) => a + f.bytes, 0),
    rowsPerSplit: perSplit,
    files: job.files,
  };
}

export function datasetCard(job: JobRecord): string {
  const ext = FORMAT_FILES[job.spec.format].ext;
  const splits = SPLIT_NAMES.filter((s) => job.files.some((f) => f.split === s));
  const yaml = [
    '---',
    'configs:',
    '- config_name: default',
    '  data_files:',
    ...splits.flatMap((s) => [`  - split: ${LOADER_SPLIT[s]}`, `    path: "${s}-*.${ext}"`]),
    '---',
  ];
  const rows = (s: string): number => job.files.filter((f) => f.split === s).reduce((a, f) => a + f.rows, 0);
  const spec = job.spec;
  const source = spec.kind === 'filters'
    ? `transactions filtered by protocols ${spec.filters.protocols?.join(', ') ?? '(all available)'} and dates ${spec.filters.dateRange?.start ?? '(any)'} to ${spec.filters.dateRange?.end ?? '(any)'}`
    : `the SQL query:\n\n\`\`\`sql\n${spec.query}\n\`\`\``;
  return [
    ...yaml,
    '',
    `# Solana DeFi instructions export ${job.id}`,
    '',
    `Rows of ${source}`,
    '',
    `Created ${job.createdAt}; data up to records ingested at ${job.work?.ingestedAt ?? '(see manifest)'} UTC.`,
    '',
    '| split | rows | files |',
    '|---|---|---|',
    ...splits.map((s) => `| ${s} | ${rows(s)} | ${job.files.filter((f) => f.split === s).map((f) => f.name).join(', ')} |`),
    '',
    `Format ${spec.format}; split seed ${spec.seed}${spec.sampling ? `; sampled at rate ${spec.sampling.rate} with seed ${spec.sampling.seed}` : ''}. `
      + 'A transaction (signature) is always in exactly one split; the same configuration over the same data gives the same files.',
    '',
    `Splits and samples: ${HASHING}`,
    '',
    '## Columns',
    '',
    '| column | type |',
    '|---|---|',
    ...(job.schema ?? []).map((c) => `| ${c.name} | ${c.type} |`),
    '',
    `Checksums (sha256) and sizes of every file are in ${MANIFEST}.`,
    '',
  ].join('\n');
}
