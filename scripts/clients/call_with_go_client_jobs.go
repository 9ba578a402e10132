// The export jobs and SQL executions of scripts/clients/call_with_go_client.go (the same
// package, copied beside it as cmd/smoke): started first, followed to their end, listed,
// downloaded (files against the job's sha256, Parquet by its magic bytes, CSV by its row count,
// the signed link without the key) and cancelled once finished (a finished job stays as it is).
package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	txa "github.com/txa/goclient"
)

func (d *driver) startJobs() {
	d.run("createExport", func() (any, error) {
		body := txa.CreateExportRequest{Columns: []txa.ExportColumn{"signature", "block_time", "fee", "success"}}
		body.SetSeed(bigSeed)
		body.SetFormat("PARQUET")
		body.SetFilters(txa.CreateExportRequestFilters{Protocols: []txa.ProtocolName{txa.JUPITER_V6}})
		job, res, err := d.c.ExportsAPI.CreateExport(d.ctx).CreateExportRequest(body).Execute()
		if err := answered(res, err, 202); err != nil {
			return nil, err
		}
		d.job = job.GetId()
		return d.job, nil
	})
	d.run("createSqlExport", func() (any, error) {
		body := txa.CreateSqlExportRequest{Query: "SELECT signature, protocol_name, fee FROM transactions WHERE NOT success"}
		body.SetFormat("CSV")
		job, res, err := d.c.ExportsAPI.CreateSqlExport(d.ctx).CreateSqlExportRequest(body).Execute()
		if err := answered(res, err, 202); err != nil {
			return nil, err
		}
		d.sqlJob = job.GetId()
		return d.sqlJob, nil
	})
	d.run("createQueryExecution", func() (any, error) {
		body := txa.CreateQueryExecutionRequest{Query: execQuery}
		body.SetFormat("json")
		started, res, err := d.c.SQLExecutionsAPI.CreateQueryExecution(d.ctx).CreateQueryExecutionRequest(body).Execute()
		if err := answered(res, err, 202); err != nil {
			return nil, err
		}
		d.exec = started.GetId()
		return d.exec, nil
	})
}

var finished = []txa.ExportJobStatus{txa.COMPLETED, txa.FAILED, txa.CANCELLED, txa.EXPIRED}

// follow reads a job until it ends; it must end COMPLETED.
func follow(read func() (*txa.GetSqlExport200Response, *http.Response, error)) (*txa.GetSqlExport200Response, error) {
	for range 240 {
		job, res, err := read()
		if err := answered(res, err, 200); err != nil {
			return nil, err
		}
		if slices.Contains(finished, job.GetStatus()) {
			if job.GetStatus() != txa.COMPLETED {
				return nil, fmt.Errorf("job %s ended %s: %s", job.GetId(), job.GetStatus(), job.GetError())
			}
			return job, nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	return nil, errors.New("the job did not finish")
}

func listed(list *txa.ListSqlExports200Response, res *http.Response, err error, id string) (any, error) {
	if err := answered(res, err, 200); err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(list.GetJobs(), func(j txa.ListSqlExports200ResponseJobsInner) bool { return j.GetId() == id }) {
		return fail("%s not listed", id)
	}
	return len(list.GetJobs()), nil
}

func cancelled(job *txa.GetSqlExport200Response, res *http.Response, err error) (any, error) {
	if err := answered(res, err, 200); err != nil {
		return nil, err
	}
	if job.GetStatus() != txa.COMPLETED {
		return fail("a finished job became %s", job.GetStatus())
	}
	return job.GetStatus(), nil
}

func (d *driver) filterExport() {
	d.run("getExport", func() (any, error) {
		job, err := follow(d.c.ExportsAPI.GetExport(d.ctx, d.job).Execute)
		if err != nil {
			return nil, err
		}
		d.jobView = job
		seeds := job.GetSeeds()
		d.facts["splitSeed"] = seeds.GetSplit() // an int64: past 2^31 here
		if seeds.GetSplit() != bigSeed {
			return fail("split seed %d", seeds.GetSplit())
		}
		return len(job.GetFiles()), nil
	})
	d.run("listExports", func() (any, error) {
		list, res, err := d.c.ExportsAPI.ListExports(d.ctx).First(100).Execute()
		return listed(list, res, err, d.job)
	})
	d.run("downloadExportFile", func() (any, error) {
		file := d.jobView.GetFiles()[0]
		f, res, err := d.c.ExportsAPI.DownloadExportFile(d.ctx, d.job, file.GetName()).Execute()
		body, err := download(f, res, err, file)
		if err != nil {
			return nil, err
		}
		if len(body) < 8 || string(body[:4]) != "PAR1" || string(body[len(body)-4:]) != "PAR1" {
			return fail("not a Parquet file")
		}
		return fmt.Sprintf("%s: %d bytes", file.GetName(), len(body)), nil
	})
	d.run("downloadExportLink", func() (any, error) {
		file := d.jobView.GetFiles()[0]
		link, err := url.Parse(file.GetUrl())
		if err != nil {
			return nil, err
		}
		q := link.Query()
		f, res, err := d.keyless.ExportsAPI.DownloadExportLink(d.ctx, d.job, file.GetName()).Key(q.Get("key")).Expires(q.Get("expires")).Sig(q.Get("sig")).Execute()
		body, err := download(f, res, err, file)
		if err != nil {
			return nil, err
		}
		return fmt.Sprintf("%d bytes without the key", len(body)), nil
	})
	d.run("cancelExport", func() (any, error) {
		return cancelled(d.c.ExportsAPI.CancelExport(d.ctx, d.job).Execute())
	})
}

func (d *driver) sqlExport() {
	d.run("getSqlExport", func() (any, error) {
		job, err := follow(d.c.ExportsAPI.GetSqlExport(d.ctx, d.sqlJob).Execute)
		d.sqlView = job
		if err != nil {
			return nil, err
		}
		return len(job.GetFiles()), nil
	})
	d.run("listSqlExports", func() (any, error) {
		list, res, err := d.c.ExportsAPI.ListSqlExports(d.ctx).First(100).Execute()
		return listed(list, res, err, d.sqlJob)
	})
	d.run("downloadSqlExportFile", func() (any, error) {
		file := d.sqlView.GetFiles()[0]
		f, res, err := d.c.ExportsAPI.DownloadSqlExportFile(d.ctx, d.sqlJob, file.GetName()).Execute()
		body, err := download(f, res, err, file)
		if err != nil {
			return nil, err
		}
		records, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
		if err != nil {
			return nil, err
		}
		if int64(len(records)-1) != file.GetRows() {
			return fail("%d CSV rows, the job says %d", len(records)-1, file.GetRows())
		}
		return fmt.Sprintf("%s: %d rows", file.GetName(), file.GetRows()), nil
	})
	d.run("cancelSqlExport", func() (any, error) {
		return cancelled(d.c.ExportsAPI.CancelSqlExport(d.ctx, d.sqlJob).Execute())
	})
}

func (d *driver) executions() {
	api := d.c.SQLExecutionsAPI
	d.run("getQueryExecution", func() (any, error) {
		for range 240 {
			view, res, err := api.GetQueryExecution(d.ctx, d.exec).Execute()
			if err := answered(res, err, 200); err != nil {
				return nil, err
			}
			if slices.Contains(finished, view.GetState()) {
				if view.GetState() != txa.COMPLETED {
					return fail("ended %s: %s", view.GetState(), view.GetError())
				}
				return view.GetTotalRows(), nil
			}
			time.Sleep(500 * time.Millisecond)
		}
		return fail("the execution did not finish")
	})
	d.run("getQueryExecutionResults", func() (any, error) {
		page, res, err := api.GetQueryExecutionResults(d.ctx, d.exec).Execute()
		if err := answered(res, err, 200); err != nil {
			return nil, err
		}
		direct, res, err := d.c.SQLAPI.RunQuery(d.ctx).RunQueryRequest(txa.RunQueryRequest{Query: execQuery}).Execute()
		if err := answered(res, err, 200); err != nil {
			return nil, err
		}
		if !same(strs(page.GetData()), strs(direct.GetData())) || page.GetTotalRows() != int64(len(direct.GetData())) || page.GetNextCursor() != "" {
			return fail("rows %v vs /v1/query's %v (next cursor %q)", page.GetData(), direct.GetData(), page.GetNextCursor())
		}
		return fmt.Sprintf("%d rows, as /v1/query answers them", len(page.GetData())), nil
	})
	d.run("cancelQueryExecution", func() (any, error) {
		view, res, err := api.CancelQueryExecution(d.ctx, d.exec).Execute()
		if err := answered(res, err, 200); err != nil {
			return nil, err
		}
		if view.GetState() != txa.COMPLETED {
			return fail("a finished execution became %s", view.GetState())
		}
		return view.GetState(), nil
	})
}
