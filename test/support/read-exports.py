# Reads downloaded export directories with the loaders a user would (pyarrow, Hugging Face
# `datasets`; for CSV also pandas and Python's csv module, each with its defaults), run from the
# project's .venv (scripts/python/venv.sh) by test/daemons/export-loaders.test.ts. Prints one JSON
# object: what each loader saw of each export.
# argv[1]: a JSON list of {"name", "dir", "format", "empty", "text"?}; argv[2]: a cache directory.
# "text": CSV columns whose values are reported per signature, decoded as the export's dataset
# card says (the card's own `unescape`, run as written).
import csv
import json
import os
import re
import statistics
import sys

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"

import pandas as pd  # noqa: E402
import pyarrow.csv as pcsv  # noqa: E402
import pyarrow.json as pjson  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from datasets import load_dataset  # noqa: E402


def plain(v):
    """A value as JSON: timestamps as ISO text, the rest as they are."""
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return v


def with_pyarrow(path, fmt):
    if fmt == "PARQUET":
        table = pq.read_table(path)
    elif fmt == "CSV":
        table = pcsv.read_csv(path)
    else:
        table = pjson.read_json(path)
    first = table.slice(0, 1).to_pylist()
    return {
        "rows": table.num_rows,
        "columns": table.column_names,
        "types": {f.name: str(f.type) for f in table.schema},
        "first": {k: plain(v) for k, v in first[0].items()} if first else None,
    }


def card_unescape(directory):
    """The decoder of CSV text cells that the export's dataset card gives (its python block), run as written."""
    with open(os.path.join(directory, "README.md"), encoding="utf-8") as f:
        card = f.read()
    block = re.search(r"```python\n(.*?def unescape.*?)```", card, re.S)
    if block is None:
        raise ValueError("the dataset card gives no unescape for CSV text")
    scope = {}
    exec(block.group(1), scope)  # noqa: S102 - the card's own example, the point of the check
    return scope["unescape"]


def csv_readers(path, columns):
    """Rows as pandas and the csv module read them with their defaults, and `columns` of each row by signature."""
    frame = pd.read_csv(path)
    with open(path, newline="", encoding="utf-8") as f:
        records = list(csv.DictReader(f))
    pick = lambda rows: {r["signature"]: {c: r[c] if isinstance(r[c], str) else "" for c in columns} for r in rows}  # noqa: E731
    return {
        "pandas": {"rows": len(frame), "columns": list(frame.columns), "text": pick(frame.to_dict("records"))},
        "csv": {"rows": len(records), "columns": list(records[0].keys()) if records else [], "text": pick(records)},
    }


def decoded(seen, unescape):
    """Each reported text value decoded by the card's rule."""
    return {sig: {c: unescape(v) for c, v in cols.items()} for sig, cols in seen.items()}


def with_datasets(directory, cache, streaming):
    ds = load_dataset(directory, cache_dir=cache, streaming=streaming)
    out = {}
    for split, part in ds.items():
        rows = list(part)
        fees = [float(r["fee"]) for r in rows if "fee" in r]
        counts = {}
        for r in rows:
            if "protocol_name" in r:
                counts[r["protocol_name"]] = counts.get(r["protocol_name"], 0) + 1
        out[split] = {
            "rows": len(rows),
            # What a user would compute first: the mean and (population) deviation of fee,
            # and the rows of each protocol.
            "feeMean": statistics.fmean(fees) if fees else None,
            "feeStd": statistics.pstdev(fees) if fees else None,
            "protocols": counts,
            "features": {k: str(v) for k, v in (part.features or {}).items()},
            "first": {k: plain(v) for k, v in rows[0].items()} if rows else None,
        }
    return out


def main():
    exports = json.loads(sys.argv[1])
    cache = sys.argv[2]
    report = {}
    for e in exports:
        files = sorted(f for f in os.listdir(e["dir"]) if f not in ("README.md", "manifest.json"))
        entry = {"pyarrow": {}, "datasets": None, "streaming": None, "errors": {}, "text": {}}
        text_columns = e.get("text") or []
        for f in files:
            # pyarrow's JSON reader refuses a 0-byte file ("Empty JSON file"): an empty JSONL
            # export is read through the card's features (streaming) instead.
            if e["format"] == "JSONL" and os.path.getsize(os.path.join(e["dir"], f)) == 0:
                continue
            try:
                entry["pyarrow"][f] = with_pyarrow(os.path.join(e["dir"], f), e["format"])
            except Exception as err:  # reported, and the test fails on it
                entry["errors"]["pyarrow " + f] = f"{type(err).__name__}: {err}"
            if text_columns:
                try:
                    unescape = card_unescape(e["dir"])
                    table = pcsv.read_csv(os.path.join(e["dir"], f)).to_pylist()
                    readers = csv_readers(os.path.join(e["dir"], f), text_columns)
                    readers["pyarrow"] = {"text": {r["signature"]: {c: r[c] or "" for c in text_columns} for r in table}}
                    entry["text"][f] = {k: {**{x: y for x, y in v.items() if x != "text"}, "decoded": decoded(v["text"], unescape)} for k, v in readers.items()}
                except Exception as err:
                    entry["errors"]["text " + f] = f"{type(err).__name__}: {err}"
        modes = [True] if e["empty"] else [False, True]
        for streaming in modes:
            try:
                entry["streaming" if streaming else "datasets"] = with_datasets(e["dir"], cache, streaming)
            except Exception as err:
                entry["errors"]["streaming" if streaming else "datasets"] = f"{type(err).__name__}: {err}"
        report[e["name"]] = entry
    print(json.dumps(report))


main()
