"""Schemathesis hooks: the rules the OpenAPI document states outside JSON Schema.

JSON Schema checks one value at a time, so some rules of this API cannot be written in it:
date_from not after date_to, offset + limit within the listing's window, the bucket count of a
time series, export splits summing to 1, the columns an export's preprocessing names being
exported, stratifyBy going with STRATIFIED sampling, SQL text being a SELECT the sandbox accepts, and a
cursor being one the listing issued. The document states each of them on the operation (or on
the body schema) as `x-cross-field-rules` (docs/rest-and-sql.md, "Rules a schema cannot
state"), and the server refuses a request that breaks one with 400.

Schemathesis checks that every request its generator considers valid is accepted
(positive_data_acceptance). This hook reads the rules from the document and brings each
such request within them before it is sent, so that check keeps its full strength for every
rule the schema does state. Requests generated to be invalid are sent as generated.

Loaded through schemathesis.toml (`hooks`), so a run from the repository uses it.
"""

from __future__ import annotations

import datetime
import zlib
from typing import Any

import schemathesis


def _rules(case: Any) -> list[dict[str, Any]]:
    raw = case.operation.definition.raw
    if not isinstance(raw, dict):
        # Not an OpenAPI operation (a GraphQL field): its rules live in its own schema.
        return []
    rules = list(raw.get("x-cross-field-rules", []))
    body = raw.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
    if isinstance(body, dict):
        rules.extend(body.get("x-cross-field-rules", []))
    return rules


def _defaults(case: Any) -> dict[str, Any]:
    out = {}
    for parameter in case.operation.definition.raw.get("parameters", []):
        schema = parameter.get("schema", {})
        if "default" in schema:
            out[parameter["name"]] = schema["default"]
    return out


def _day(value: Any) -> datetime.date | None:
    try:
        return datetime.date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _get(obj: Any, dotted: str) -> tuple[Any, str] | None:
    """The dict holding the last key of a dotted path, and that key; None when absent."""
    *parents, last = dotted.split(".")
    for key in parents:
        if not isinstance(obj, dict) or not isinstance(obj.get(key), dict):
            return None
        obj = obj[key]
    return (obj, last) if isinstance(obj, dict) else None


def _ordered(holder: dict[str, Any], first: str, second: str) -> None:
    a, b = holder.get(first), holder.get(second)
    if isinstance(a, str) and isinstance(b, str) and a > b:
        holder[first], holder[second] = b, a


def _apply(rule: dict[str, Any], case: Any) -> None:
    query = case.query if isinstance(case.query, dict) else None
    body = case.body if isinstance(case.body, dict) else None
    kind = rule.get("rule")
    if kind == "ordered" and "params" in rule and query is not None:
        _ordered(query, *rule["params"])
    elif kind == "ordered" and "fields" in rule and body is not None:
        first, second = (_get(body, p) for p in rule["fields"])
        if first is not None and second is not None and first[0] is second[0]:
            _ordered(first[0], first[1], second[1])
    elif kind == "sumAtMost" and query is not None:
        defaults = _defaults(case)
        x, y = rule["params"]
        try:
            vx, vy = int(query.get(x, defaults.get(x, 0))), int(query.get(y, defaults.get(y, 0)))
        except (TypeError, ValueError):
            return
        if vx + vy > rule["maximum"]:
            query[x] = max(0, rule["maximum"] - vy)
    elif kind == "spanAtMost" and query is not None:
        start, end = (_day(query.get(p)) for p in rule["params"])
        per = rule["perDay"]
        unit = per.get(str(query.get(per["param"], _defaults(case).get(per["param"]))), max(v for k, v in per.items() if k != "param"))
        if start is None or end is None or end < start:
            return
        if ((end - start).days + 1) * unit > rule["maximum"]:
            query[rule["params"][1]] = (start + datetime.timedelta(days=rule["maximum"] // unit - 1)).isoformat()
    elif kind == "sumEquals" and body is not None and isinstance(body.get(rule["property"]), dict):
        parts = body[rule["property"]]
        total = sum(v for v in parts.values() if isinstance(v, (int, float)))
        if abs(total - rule["value"]) > rule["tolerance"]:
            if total > 0:
                for k, v in parts.items():
                    if isinstance(v, (int, float)):
                        parts[k] = v * rule["value"] / total
            else:
                parts.clear()
                parts["train"] = rule["value"]
    elif kind == "language" and body is not None and isinstance(body.get(rule["property"]), str):
        valid = rule["valid"]
        body[rule["property"]] = valid[zlib.crc32(body[rule["property"]].encode("utf-8", "replace")) % len(valid)]
    elif kind == "subsetOf" and body is not None and isinstance(body.get(rule["of"]), list):
        # Columns an option names must be among the exported ones: others are dropped.
        for dotted in rule["fields"]:
            held = _get(body, dotted)
            if held is not None and isinstance(held[0].get(held[1]), list):
                held[0][held[1]] = [c for c in held[0][held[1]] if c in body[rule["of"]]]
    elif kind == "onlyWith" and body is not None:
        # A field that belongs to one value of another is dropped beside any other value.
        held, when = _get(body, rule["field"]), _get(body, rule["when"])
        if held is not None and held[1] in held[0] and (when is None or when[0].get(when[1], None) != rule["equals"]):
            held[0].pop(held[1], None)
    elif kind == "notValue" and body is not None:
        # A value this body refuses (a SQL export's STRATIFIED): dropped, its default taken.
        held = _get(body, rule["field"])
        if held is not None and held[0].get(held[1]) == rule["value"]:
            held[0].pop(held[1], None)
    elif kind == "issued" and query is not None:
        # A cursor only the server can mint: a generated one is dropped, the first page asked.
        query.pop(rule["param"], None)


@schemathesis.hook
def before_call(ctx: Any, case: Any, **kwargs: Any) -> None:
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return
    for rule in _rules(case):
        _apply(rule, case)
