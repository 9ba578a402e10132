"""Calls every path of the REST/SQL OpenAPI document through a client generated from it by
openapi-python-client (test/daemons/openapi-client.test.ts), as a user of that client would, and checks
each answer against an independent reference: CSV against the JSON answer of the same query,
downloads against the job's sha256 and row count, Parquet by its magic bytes.

usage: python call_every_path.py <dir holding the txa_client package> <base url> <api key>
Prints one JSON object: {"results": {"<METHOD> <path>": {"ok": bool, "detail": str}}, "wire":
["GET /path", ...]}, wire being every request the client sent (an httpx event hook's record), so
the test can tell which operations were called from what went out, not from what this file says.
"""
import csv
import datetime
import hashlib
import io
import json
import sys
import time
import traceback
import urllib.parse

sys.path.insert(0, sys.argv[1])
BASE, KEY = sys.argv[2], sys.argv[3]

from txa_client import Client  # noqa: E402
from txa_client.api.exports import (  # noqa: E402
    list_exports, get_export, download_export_file, download_export_link,
    list_sql_exports, get_sql_export, download_sql_export_file,
    create_export, cancel_export, create_sql_export, cancel_sql_export,
)
from txa_client.api.rest import (  # noqa: E402
    get_fee_stats, get_protocol_stats, get_protocol_activity,
    get_global_stats, get_transactions, get_transaction,
)
from txa_client.api.metrics import get_metrics  # noqa: E402
from txa_client.api.sql import run_rest_query, run_query, run_csv_query  # noqa: E402
from txa_client.api.sql_executions import (  # noqa: E402
    get_query_execution, get_query_execution_results, create_query_execution, cancel_query_execution,
)
from txa_client.models import (  # noqa: E402
    ErrorBody, ExportJobStatus, RunRestQueryBody, CreateExportBody, RunQueryBody, RunCsvQueryBody, CreateQueryExecutionBody,
    CreateSqlExportBody, ProtocolName,
)

from txa_client.types import UNSET  # noqa: E402

UNSET_VALUES = UNSET
wire = []


def record(request):
    wire.append(f"{request.method} {request.url.raw_path.decode().split('?')[0]}")


HOOKS = {"event_hooks": {"request": [record]}}
client = Client(base_url=BASE, headers={"x-api-key": KEY}, timeout=60.0, httpx_args=HOOKS)
report = {}
# The demo data covers the 30 days before the server's first start: yesterday is inside it.
DAY = datetime.datetime.now(datetime.timezone.utc).date() - datetime.timedelta(days=1)
WEEK_AGO = DAY - datetime.timedelta(days=6)


def call(name, fn):
    try:
        report[name] = {"ok": True, "detail": str(fn())[:300]}
    except Exception:  # the report says what failed; the test prints it
        report[name] = {"ok": False, "detail": traceback.format_exc()[-1500:]}


def parsed(res, status=200):
    """The answer's model; an ErrorBody or another status is a failure."""
    if res.status_code != status or isinstance(res.parsed, ErrorBody):
        raise AssertionError(f"HTTP {res.status_code}: {res.content[:300]!r}")
    return res.parsed


# ---- REST
state = {}


def transactions():
    page = parsed(get_transactions.sync_detailed(client=client, limit=5, date_from=WEEK_AGO, date_to=DAY))
    assert len(page.data) == 5, len(page.data)
    state["sig"] = page.data[0].signature
    return state["sig"]


call("GET /api/v1/transactions", transactions)


def one_transaction():
    record = parsed(get_transaction.sync_detailed(state["sig"], client=client)).data
    assert record.signature == state["sig"], record.signature
    return record.protocol_name


call("GET /api/v1/transactions/{signature}", one_transaction)


def protocols():
    stats = parsed(get_protocol_stats.sync_detailed(
        client=client, protocol_name=ProtocolName.JUPITER_V6, date_from=WEEK_AGO, date_to=DAY)).data
    assert stats.total_transactions > 0, stats
    return stats.total_transactions


call("GET /api/v1/analytics/protocols", protocols)


def time_series():
    buckets = parsed(get_protocol_activity.sync_detailed(client=client, date_from=WEEK_AGO, date_to=DAY)).data
    assert len(buckets) == 7 * 24 and sum(b.count for b in buckets) > 0, len(buckets)
    return len(buckets)


call("GET /api/v1/analytics/time-series", time_series)
call("GET /api/v1/analytics/fees", lambda: parsed(get_fee_stats.sync_detailed(
    client=client, date_from=WEEK_AGO, date_to=DAY)).data)


def stats():
    data = parsed(get_global_stats.sync_detailed(client=client)).data
    assert len(data.protocols) > 0
    return [p.protocol_name for p in data.protocols]


call("GET /api/v1/stats", stats)

# ---- SQL: the CSV route's rows equal the JSON answer's
QUERY = "SELECT protocol_name, count() AS n, sum(fee) AS fees FROM transactions GROUP BY protocol_name ORDER BY protocol_name"


def sql_json(module, body_cls):
    def run():
        answer = parsed(module.sync_detailed(client=client, body=body_cls.from_dict({"query": QUERY})))
        rows = [r.to_dict() for r in answer.data]
        assert answer.count == len(rows) > 0
        state["rows"] = rows
        return rows[:2]
    return run


call("POST /v1/query", sql_json(run_query, RunQueryBody))
call("POST /api/v1/query", sql_json(run_rest_query, RunRestQueryBody))


def sql_csv():
    text = parsed(run_csv_query.sync_detailed(client=client, body=RunCsvQueryBody.from_dict({"query": QUERY})))
    assert isinstance(text, str), type(text)
    rows = list(csv.DictReader(io.StringIO(text)))
    as_strings = [{k: str(v) for k, v in r.items()} for r in state["rows"]]
    assert rows == as_strings, (rows[:2], as_strings[:2])
    return f"{len(rows)} rows, equal to the JSON answer"


call("POST /v1/query/csv", sql_csv)

# ---- Exports: a filter export (Parquet) and a SQL export (CSV), followed, listed, downloaded


def wait(getter, job_id):
    for _ in range(240):
        job = parsed(getter.sync_detailed(job_id, client=client))
        if job.status in (ExportJobStatus.COMPLETED, ExportJobStatus.FAILED, ExportJobStatus.CANCELLED):
            return job
        time.sleep(0.5)
    raise AssertionError(f"job {job_id} did not finish")


def create_filter_export():
    body = CreateExportBody.from_dict({"format": "PARQUET", "filters": {"protocols": ["jupiter_v6"]},
                                        "columns": ["signature", "block_time", "fee", "success"]})
    state["job"] = parsed(create_export.sync_detailed(client=client, body=body), 202).id
    return state["job"]


def start_sql_export():
    body = CreateSqlExportBody.from_dict({"query": "SELECT signature, protocol_name, fee FROM transactions WHERE NOT success", "format": "CSV"})
    state["sqljob"] = parsed(create_sql_export.sync_detailed(client=client, body=body), 202).id
    return state["sqljob"]


def follow(getter, key):
    def run():
        job = wait(getter, state[key])
        assert job.status == ExportJobStatus.COMPLETED, job.status
        state[key + "_view"] = job
        return [(f.name, f.rows) for f in job.files]
    return run


def listed(lister, key):
    def run():
        ids = [j.id for j in parsed(lister.sync_detailed(client=client)).jobs]
        assert state[key] in ids, ids
        return len(ids)
    return run


def download(module, key, check):
    def run():
        job = state[key + "_view"]
        f = job.files[0]
        body = parsed(module.sync_detailed(job.id, f.name, client=client)).payload.read()
        assert hashlib.sha256(body).hexdigest() == f.sha256, "sha256 differs from the job's"
        check(body, f)
        return f"{f.name}: {len(body)} bytes"
    return run


def parquet(body, _f):
    assert body[:4] == b"PAR1" and body[-4:] == b"PAR1", "not a Parquet file"


def csv_rows(body, f):
    rows = list(csv.reader(io.StringIO(body.decode())))
    assert len(rows) - 1 == f.rows, (len(rows), f.rows)


def signed_link():
    f = state["job_view"].files[0]
    link = urllib.parse.urlparse(f.url)
    q = dict(urllib.parse.parse_qsl(link.query))
    keyless = Client(base_url=BASE, timeout=60.0, httpx_args=HOOKS)  # the link is its own credential
    body = parsed(download_export_link.sync_detailed(state["job"], f.name, client=keyless, key=q["key"], expires=q["expires"], sig=q["sig"])).payload.read()
    assert hashlib.sha256(body).hexdigest() == f.sha256
    return f"{len(body)} bytes without the key"


def cancel(module, key):
    def run():
        job = parsed(module.sync_detailed(state[key], client=client))
        assert job.status == ExportJobStatus.COMPLETED, job.status  # a finished job stays as it is
        return job.status
    return run


call("POST /v1/exports", create_filter_export)
call("GET /v1/exports/{id}", follow(get_export, "job"))
call("GET /v1/exports", listed(list_exports, "job"))
call("GET /v1/exports/{id}/files/{name}", download(download_export_file, "job", parquet))
call("GET /v1/exports/links/{id}/{name}", signed_link)
call("POST /v1/exports/{id}/cancel", cancel(cancel_export, "job"))
call("POST /v1/query/exports", start_sql_export)
call("GET /v1/query/exports/{id}", follow(get_sql_export, "sqljob"))
call("GET /v1/query/exports", listed(list_sql_exports, "sqljob"))
call("GET /v1/query/exports/{id}/files/{name}", download(download_sql_export_file, "sqljob", csv_rows))
call("POST /v1/query/exports/{id}/cancel", cancel(cancel_sql_export, "sqljob"))



# ---- SQL executions: started, followed, its one page equal to /v1/query's answer of the same query
EXEC_QUERY = "SELECT protocol_name, count() AS n FROM transactions GROUP BY protocol_name ORDER BY protocol_name"


def state_of(view):
    return getattr(view.state, "value", view.state)


def create_execution():
    body = CreateQueryExecutionBody.from_dict({"query": EXEC_QUERY, "format": "json"})
    state["exec"] = parsed(create_query_execution.sync_detailed(client=client, body=body), 202).id
    return state["exec"]


def follow_execution():
    for _ in range(240):
        view = parsed(get_query_execution.sync_detailed(state["exec"], client=client))
        if state_of(view) in ("COMPLETED", "FAILED", "CANCELLED"):
            assert state_of(view) == "COMPLETED", (state_of(view), view.error)
            return view.total_rows
        time.sleep(0.5)
    raise AssertionError("the execution did not finish")


def execution_results():
    page = parsed(get_query_execution_results.sync_detailed(state["exec"], client=client))
    direct = parsed(run_query.sync_detailed(client=client, body=RunQueryBody.from_dict({"query": EXEC_QUERY})))
    got = [{k: str(v) for k, v in r.to_dict().items()} for r in page.data]
    want = [{k: str(v) for k, v in r.to_dict().items()} for r in direct.data]
    assert got == want, (got[:3], want[:3])
    assert page.total_rows == len(want) and page.next_cursor in (None, UNSET_VALUES), page.next_cursor
    return f"{len(got)} rows, as /v1/query answers them"


def cancel_execution():
    view = parsed(cancel_query_execution.sync_detailed(state["exec"], client=client))
    assert state_of(view) == "COMPLETED", state_of(view)  # a finished execution stays as it is
    return state_of(view)


def user_metrics():
    # Prometheus text: every family of the protocol, its transactions counter equal to the REST stats of all time.
    res = get_metrics.sync_detailed(client=client, protocol=[ProtocolName("jupiter_v6")])
    assert res.status_code == 200, (res.status_code, res.content[:300])
    text = res.content.decode()
    line = next(l for l in text.splitlines() if l.startswith('txa_protocol_transactions_total{') and 'protocol="jupiter_v6"' in l)
    stats = parsed(get_protocol_stats.sync_detailed(client=client, protocol_name=ProtocolName("jupiter_v6")))
    assert float(line.rsplit(" ", 1)[1]) == stats.data.total_transactions, (line, stats.data.total_transactions)
    return line


call("GET /v1/metrics", user_metrics)
call("POST /v1/query/executions", create_execution)
call("GET /v1/query/executions/{id}", follow_execution)
call("GET /v1/query/executions/{id}/results", execution_results)
call("POST /v1/query/executions/{id}/cancel", cancel_execution)

print(json.dumps({"results": report, "wire": wire}))
