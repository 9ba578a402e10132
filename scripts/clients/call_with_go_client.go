// Calls the service through a Go client generated from its OpenAPI document by openapi-generator
// (test/openapi-go-client.test.ts copies this file into the generated module as cmd/smoke), as a
// user of that client would, on the operations whose declarations once broke such a client: a
// 64-bit seed, 64-bit totals, a named enum as a query parameter, a repeatable query parameter.
//
// usage: go run ./cmd/smoke <api key> <a day inside the data, YYYY-MM-DD>
// Prints one JSON object of what it read; exits 1 naming the call that failed.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	txa "github.com/txa/goclient"
)

// A split seed past 2^31 (the document's seeds are 0..2^32-1): a 32-bit field cannot hold it.
const bigSeed int64 = 3987331086

func must[T any](what string, v T, _ any, err error) T {
	if err != nil {
		detail := err.Error()
		if e, ok := err.(*txa.GenericOpenAPIError); ok {
			detail += ": " + string(e.Body())
		}
		fmt.Fprintf(os.Stderr, "%s: %s\n", what, detail)
		os.Exit(1)
	}
	return v
}

func main() {
	key, day := os.Args[1], os.Args[2]
	cfg := txa.NewConfiguration() // its server: the document's, the service it was fetched from
	cfg.AddDefaultHeader("x-api-key", key)
	c := txa.NewAPIClient(cfg)
	ctx := context.Background()
	out := map[string]any{}

	stats, res, err := c.RESTAPI.GetGlobalStats(ctx).Execute()
	data := must("GetGlobalStats", stats, res, err).GetData()
	out["totalTransactions"] = data.GetTotalTransactions()

	body := txa.CreateExportRequest{}
	body.SetSeed(bigSeed)
	body.SetFormat("CSV")
	body.SetFilters(txa.CreateExportRequestFilters{Protocols: []txa.ProtocolName{txa.JUPITER_V6}})
	job, res, err := c.ExportsAPI.CreateExport(ctx).CreateExportRequest(body).Execute()
	id := must("CreateExport", job, res, err).GetId()
	read, res, err := c.ExportsAPI.GetExport(ctx, id).Execute()
	seeds := must("GetExport", read, res, err).GetSeeds()
	out["splitSeed"] = seeds.GetSplit()
	cancelled, res, err := c.ExportsAPI.CancelExport(ctx, id).Execute()
	out["cancelledStatus"] = must("CancelExport", cancelled, res, err).GetStatus()

	series, res, err := c.RESTAPI.GetProtocolActivity(ctx).DateFrom(day).DateTo(day).Granularity(txa.GRANULARITY_DAY).Execute()
	out["dayBuckets"] = len(must("GetProtocolActivity", series, res, err).GetData())

	text, res, err := c.MetricsAPI.GetMetrics(ctx).Protocol([]txa.ProtocolName{txa.JUPITER_V6, txa.PUMP_FUN}).Execute()
	protocols := map[string]bool{}
	for _, line := range strings.Split(must("GetMetrics", text, res, err), "\n") {
		if strings.HasPrefix(line, "txa_protocol_transactions_total{") {
			protocols[strings.SplitN(strings.SplitN(line, `protocol="`, 2)[1], `"`, 2)[0]] = true
		}
	}
	out["metricsProtocols"] = protocols

	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		os.Exit(1)
	}
}
