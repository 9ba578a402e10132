# Summarise a series of bench/results/dedupe40/run.sh: python3 summarise.py DIR
import json, glob, sys, statistics, re
rows = {}
for f in sorted(glob.glob(f'{sys.argv[1]}/kafka-ingest-100000-d40-*.json')):
    d = json.load(open(f))
    m = re.search(r'-d40-(.+)-r(\d+)\.json', f)
    fr = d.get('freshness') or {}
    rows.setdefault(m.group(1), []).append((int(m.group(2)), d['oursRecordsPerSecond'], d['clickhouseKafkaEngineRecordsPerSecond'], d['ratioOursToEngine'],
        d['stageMs'], d.get('recordsCheckedAhead'), d['loadAtStart'][0], d['loadAtEnd'][0], fr.get('visibleP99Ms')))
print('| variant | round | ours rec/s | engine rec/s | ours/engine | dedupe / journal / insert ms | checked beside | visible p99 ms at 10k/s | load start → end |')
print('|---|---|---|---|---|---|---|---|---|')
for v, rs in rows.items():
    for x in sorted(rs):
        s = x[4]
        print(f'| {v} | {x[0]} | {x[1]:,} | {x[2]:,} | {x[3]:.2f} | {s["dedupe"]} / {s["journal"]} / {s["insert"]} | {x[5]:,} | {x[8]:,} | {x[6]:.1f} → {x[7]:.1f} |')
print()
for v, rs in rows.items():
    print(f'{v}: median ours/engine {statistics.median([x[3] for x in rs]):.2f}, median dedupe {statistics.median([x[4]["dedupe"] for x in rs])} ms, '
          f'median insert {statistics.median([x[4]["insert"] for x in rs])} ms, median visible p99 {statistics.median([x[8] for x in rs])} ms')
