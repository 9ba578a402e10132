// Calls every operation of the REST/SQL OpenAPI document through a Go client generated from it by
// openapi-generator (test/openapi-go-client.test.ts copies this file into the generated module as
// cmd/smoke), as a user of that client would: each answer's status checked, its body decoded by
// the generated models, and checked against an independent reference (CSV against the JSON answer
// of the same query, downloads against the job's sha256 and row count, /v1/metrics' counter
// against the REST stats), among them the declarations that once broke such a client: a split
// seed past 2^31, 64-bit totals, a named enum as a query parameter, a repeatable query parameter.
//
// usage: go run ./cmd/smoke <api key> <a day inside the data, YYYY-MM-DD>
// Prints one JSON object: {"results": {<operationId>: {ok, detail}}, "wire": ["GET /path", …],
// "facts": {…}}, wire being every request the client sent (its transport's record), so the test
// can tell which operations were called from what went out, not from what this file says.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	txa "github.com/txa/goclient"
)

// A split seed past 2^31 (the document's seeds are 0..2^32-1): a 32-bit field cannot hold it.
const bigSeed int64 = 3987331086

const query = "SELECT protocol_name, count() AS n, sum(fee) AS fees FROM transactions GROUP BY protocol_name ORDER BY protocol_name"
const execQuery = "SELECT protocol_name, count() AS n FROM transactions GROUP BY protocol_name ORDER BY protocol_name"

type result struct {
	Ok     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// recorder notes every request the generated client sends, then sends it.
type recorder struct{ wire *[]string }

func (r recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	*r.wire = append(*r.wire, req.Method+" "+req.URL.EscapedPath())
	return http.DefaultTransport.RoundTrip(req)
}

type driver struct {
	ctx     context.Context
	c       *txa.APIClient
	keyless *txa.APIClient // a signed link is its own credential
	day     string
	weekAgo string
	results map[string]result
	facts   map[string]any
	wire    []string
	sig     string
	rows    []map[string]interface{}
	job     string
	sqlJob  string
	exec    string
	jobView *txa.GetSqlExport200Response
	sqlView *txa.GetSqlExport200Response
}

// answered is the call's error, or one saying its status is not the documented one.
func answered(res *http.Response, err error, status int) error {
	if err != nil {
		var api *txa.GenericOpenAPIError
		if errors.As(err, &api) {
			return fmt.Errorf("%w: %s", err, api.Body())
		}
		return err
	}
	if res.StatusCode != status {
		return fmt.Errorf("HTTP %d, expected %d", res.StatusCode, status)
	}
	return nil
}

func (d *driver) run(operationID string, fn func() (any, error)) {
	v, err := fn()
	if err != nil {
		d.results[operationID] = result{false, err.Error()}
		return
	}
	b, _ := json.Marshal(v)
	d.results[operationID] = result{true, string(b)}
}

func fail(format string, a ...any) (any, error) { return nil, fmt.Errorf(format, a...) }

func strs(rows []map[string]interface{}) []map[string]string {
	out := make([]map[string]string, len(rows))
	for i, r := range rows {
		out[i] = map[string]string{}
		for k, v := range r {
			out[i][k] = fmt.Sprint(v)
		}
	}
	return out
}

func same(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// download reads a downloaded file (the client writes it to a temporary file) and checks its sha256.
func download(f *os.File, res *http.Response, err error, file txa.ListSqlExports200ResponseJobsInnerFilesInner) ([]byte, error) {
	if err := answered(res, err, 200); err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	body, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	if hex.EncodeToString(sum[:]) != file.GetSha256() {
		return nil, errors.New("sha256 differs from the job's")
	}
	return body, nil
}

func (d *driver) rest() {
	d.run("getTransactions", func() (any, error) {
		page, res, err := d.c.RESTAPI.GetTransactions(d.ctx).Limit(5).DateFrom(d.weekAgo).DateTo(d.day).Execute()
		if err := answered(res, err, 200); err != nil {
			return nil, err
		}
		if len(page.GetData()) != 5 {
			return fail("%d records, expected 5", len(page.GetData()))
		}
		d.sig = page.GetData()[0].GetSignature()
		return d.sig, nil
	})
	d.run("getTransaction", func() (any, error) {
		one, res, err := d.c.RESTAPI.GetTransaction(d.ctx, d.sig).Execute()
		if err := answered(res, err, 200); err != nil {
			return nil, err
		}
		data := one.GetData()
		if data.GetSignature() != d.sig {
			return fail("another record: %s", data.GetSignature())
		}
		return data.GetProtocolName(), nil
	})
	d.run("getProtocolStats", func() (any, error) {
		stats, res, err := d.c.RESTAPI.GetProtocolStats(d.ctx).ProtocolName(txa.JUPITER_V6).DateFrom(d.weekAgo).DateTo(d.day).Execute()
		if err := answered(res, err, 200); err != nil {
			return nil, err
		}
		data := stats.GetData()
		if data.GetTotalTransactions() <= 0 {
			return fail("no transactions in the week")
		}
		return data.GetTotalTransactions(), nil
	})
	d.run("getProtocolActivity", func() (any, error) {
		series, res, err := d.c.RESTAPI.GetProtocolActivity(d.ctx).DateFrom(d.day).DateTo(d.day).Granularity(txa.GRANULARITY_DAY).Execute()
		if err := answered(res, err, 200); err != nil {
			return nil, err
		}
		d.facts["dayBuckets"] = len(series.GetData())
		if len(series.GetData()) != 1 || series.GetData()[0].GetCount() <= 0 {
			return fail("%d day buckets for one day, expected 1 with records", len(series.GetData()))
		}
		return series.GetData()[0].GetCount(), nil
	})
	d.run("getFeeStats", func() (any, error) {
		fees, res, err := d.c.RESTAPI.GetFeeStats(d.ctx).DateFrom(d.weekAgo).DateTo(d.day).Execute()
		if err := answered(res, err, 200); err != nil {
			return nil, err
		}
		data := fees.GetData()
		if len(data.GetProtocols()) == 0 || data.GetTotalFees() <= 0 {
			return fail("no fees in the week")
		}
		return data.GetTotalFees(), nil
	})
	d.run("getGlobalStats", func() (any, error) {
		stats, res, err := d.c.RESTAPI.GetGlobalStats(d.ctx).Execute()
		if err := answered(res, err, 200); err != nil {
			return nil, err
		}
		data := stats.GetData()
		d.facts["totalTransactions"] = data.GetTotalTransactions() // an int64
		if data.GetTotalTransactions() <= 0 || len(data.GetProtocols()) == 0 {
			return fail("an empty store")
		}
		return data.GetTotalTransactions(), nil
	})
}

func (d *driver) sql() {
	d.run("runQuery", func() (any, error) {
		answer, res, err := d.c.SQLAPI.RunQuery(d.ctx).RunQueryRequest(txa.RunQueryRequest{Query: query}).Execute()
		if err := answered(res, err, 200); err != nil {
			return nil, err
		}
		d.rows = answer.GetData()
		if len(d.rows) == 0 || answer.GetCount() != int64(len(d.rows)) {
			return fail("count %d for %d rows", answer.GetCount(), len(d.rows))
		}
		return d.rows[:2], nil
	})
	d.run("runRestQuery", func() (any, error) {
		answer, res, err := d.c.SQLAPI.RunRestQuery(d.ctx).RunQueryRequest(txa.RunQueryRequest{Query: query}).Execute()
		if err := answered(res, err, 200); err != nil {
			return nil, err
		}
		if !same(answer.GetData(), d.rows) {
			return fail("rows differ from /v1/query")
		}
		return answer.GetCount(), nil
	})
	d.run("runCsvQuery", func() (any, error) {
		text, res, err := d.c.SQLAPI.RunCsvQuery(d.ctx).RunCsvQueryRequest(txa.RunCsvQueryRequest{Query: query}).Execute()
		if err := answered(res, err, 200); err != nil {
			return nil, err
		}
		records, err := csv.NewReader(strings.NewReader(text)).ReadAll()
		if err != nil {
			return nil, err
		}
		rows := []map[string]string{}
		for _, r := range records[1:] {
			row := map[string]string{}
			for i, h := range records[0] {
				row[h] = r[i]
			}
			rows = append(rows, row)
		}
		if !same(rows, strs(d.rows)) {
			return fail("CSV %v vs JSON %v", rows, strs(d.rows))
		}
		return fmt.Sprintf("%d rows, equal to the JSON answer", len(rows)), nil
	})
	d.run("getMetrics", d.metrics)
}

// metrics: a repeatable parameter, sent repeated; the counter equals the REST stats of all time.
func (d *driver) metrics() (any, error) {
	text, res, err := d.c.MetricsAPI.GetMetrics(d.ctx).Protocol([]txa.ProtocolName{txa.JUPITER_V6, txa.PUMP_FUN}).Execute()
	if err := answered(res, err, 200); err != nil {
		return nil, err
	}
	counter := regexp.MustCompile(`(?m)^txa_protocol_transactions_total\{protocol="([^"]+)"\} (\S+)$`)
	seen, jupiter := []string{}, int64(-1)
	for _, m := range counter.FindAllStringSubmatch(text, -1) {
		seen = append(seen, m[1])
		if m[1] == "jupiter_v6" {
			jupiter, _ = strconv.ParseInt(m[2], 10, 64)
		}
	}
	slices.Sort(seen)
	d.facts["metricsProtocols"] = seen
	stats, res, err := d.c.RESTAPI.GetProtocolStats(d.ctx).ProtocolName(txa.JUPITER_V6).Execute()
	if err := answered(res, err, 200); err != nil {
		return nil, err
	}
	if data := stats.GetData(); !same(seen, []string{"jupiter_v6", "pump_fun"}) || jupiter != data.GetTotalTransactions() {
		return fail("protocols %v, counter %d, REST stats %d", seen, jupiter, data.GetTotalTransactions())
	}
	return jupiter, nil
}

func main() {
	day, err := time.Parse("2006-01-02", os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	d := &driver{ctx: context.Background(), day: os.Args[2], weekAgo: day.AddDate(0, 0, -6).Format("2006-01-02"),
		results: map[string]result{}, facts: map[string]any{}}
	client := func(key string) *txa.APIClient {
		cfg := txa.NewConfiguration() // its server: the document's, the service it was fetched from
		cfg.HTTPClient = &http.Client{Transport: recorder{&d.wire}, Timeout: 60 * time.Second}
		if key != "" {
			cfg.AddDefaultHeader("x-api-key", key)
		}
		return txa.NewAPIClient(cfg)
	}
	d.c, d.keyless = client(os.Args[1]), client("")
	d.startJobs()
	d.rest()
	d.sql()
	d.filterExport()
	d.sqlExport()
	d.executions()
	if err := json.NewEncoder(os.Stdout).Encode(map[string]any{"results": d.results, "wire": d.wire, "facts": d.facts}); err != nil {
		os.Exit(1)
	}
}
