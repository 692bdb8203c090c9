package axiomtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

const ndjson2 = "{\"msg\":\"a\"}\n{\"msg\":\"b\"}\n"

func TestAuth(t *testing.T) {
	srv := NewForTest(t)
	restricted := NewForTest(t, WithTokens("xaat-only-this"))
	cases := []struct {
		name   string
		srv    *Server
		path   string
		header map[string]string
		want   int
	}{
		{"no authorization", srv, "/v1/datasets/d/ingest", nil, 403},
		{"basic auth", srv, "/v1/datasets/d/ingest", map[string]string{"Authorization": "Basic eGFhdDp4"}, 403},
		{"bearer without token", srv, "/v1/datasets/d/ingest", map[string]string{"Authorization": "Bearer "}, 403},
		{"bad prefix", srv, "/v1/datasets/d/ingest", map[string]string{"Authorization": "Bearer abc-123"}, 403},
		{"bare prefix", srv, "/v1/datasets/d/ingest", map[string]string{"Authorization": "Bearer xaat-"}, 403},
		{"api token", srv, "/v1/datasets/d/ingest", map[string]string{"Authorization": "Bearer xaat-1"}, 200},
		{"api token on edge", srv, "/v1/ingest/d", map[string]string{"Authorization": "Bearer xaat-1"}, 200},
		{"personal token without org", srv, "/v1/datasets/d/ingest", map[string]string{"Authorization": "Bearer xapt-1"}, 403},
		{"personal token with org", srv, "/v1/datasets/d/ingest", map[string]string{"Authorization": "Bearer xapt-1", "X-Axiom-Org-Id": "org"}, 200},
		{"personal token on edge", srv, "/v1/ingest/d", map[string]string{"Authorization": "Bearer xapt-1", "X-Axiom-Org-Id": "org"}, 403},
		{"unknown token", restricted, "/v1/datasets/d/ingest", map[string]string{"Authorization": "Bearer xaat-other"}, 403},
		{"known token", restricted, "/v1/datasets/d/ingest", map[string]string{"Authorization": "Bearer xaat-only-this"}, 200},
		{"otlp without token", srv, "/v1/traces", map[string]string{"X-Axiom-Dataset": "d"}, 403},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{"Content-Type": {"application/x-ndjson"}}
			for k, v := range c.header {
				h.Set(k, v)
			}
			code, hdr, body := post(t, c.srv.URL()+c.path, h, []byte(ndjson2))
			if code != c.want {
				t.Fatalf("status %d, want %d: %s", code, c.want, body)
			}
			if c.want == 403 {
				if body != `{"code":403,"message":"Forbidden"}` || hdr.Get("Content-Type") != "application/json" {
					t.Errorf("403 answer %q (%s)", body, hdr.Get("Content-Type"))
				}
			}
		})
	}
	if n := srv.EventCount("d"); n != 6 {
		t.Errorf("stored %d events, want 6 (three accepted requests of 2)", n)
	}
}

func TestRoutes(t *testing.T) {
	srv := NewForTest(t, WithDatasets("known"))
	cases := []struct {
		method, path string
		header       map[string]string
		want         int
	}{
		{"POST", "/v1/datasets/known/ingest", nil, 200},
		{"POST", "/v1/ingest/known", nil, 200},
		{"POST", "/v1/datasets/unknown/ingest", nil, 404},
		{"POST", "/v1/ingest/unknown", nil, 404},
		{"GET", "/v1/datasets/known/ingest", nil, 405},
		{"PUT", "/v1/ingest/known", nil, 405},
		{"GET", "/v1/traces", nil, 405},
		{"POST", "/v1/metrics", map[string]string{"X-Axiom-Metrics-Dataset": "known"}, 404},
		{"POST", "/v1/datasets/known/ingest/extra", nil, 404},
		{"POST", "/v1/datasets/bad%20name/ingest", nil, 404},
		{"POST", "/v2/datasets", nil, 404},
		{"POST", "/", nil, 404},
		{"POST", "/v1/traces", nil, 400}, // no dataset header
		{"POST", "/v1/logs", nil, 400},
		{"POST", "/v1/traces", map[string]string{"X-Axiom-Dataset": "unknown"}, 404},
	}
	for _, c := range cases {
		req, err := http.NewRequest(c.method, srv.URL()+c.path, strings.NewReader(ndjson2))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = ingestHeader("application/x-ndjson")
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s %s: status %d, want %d: %s", c.method, c.path, resp.StatusCode, c.want, body)
			continue
		}
		if c.want >= 400 && !json.Valid(body) {
			t.Errorf("%s %s: error body is not JSON: %q", c.method, c.path, body)
		}
		if c.want == 405 && resp.Header.Get("Allow") != "POST" {
			t.Errorf("%s %s: Allow %q", c.method, c.path, resp.Header.Get("Allow"))
		}
	}
	if got := srv.EventCount("known"); got != 4 {
		t.Errorf("known has %d events, want 4", got)
	}
	if st := srv.Stats(); st.Total.Requests != int64(len(cases)) || st.Total.Rejected != int64(len(cases)-2) {
		t.Errorf("stats %+v", st.Total)
	}
}

func TestContentTypes(t *testing.T) {
	cases := []struct {
		contentType, body string
		want, events      int
	}{
		{"application/json", `[{"a":1},{"a":2},{"a":3}]`, 200, 3},
		{"application/json", " \n[ ]", 200, 0},
		{"application/json", ndjson2, 200, 2}, // NDJSON under application/json
		{"application/json; charset=utf-8", `[{"a":1}]`, 200, 1},
		{"application/x-ndjson", ndjson2, 200, 2},
		{"application/nd-json", ndjson2, 200, 2},
		{"Application/X-NDJSON", "\n\n" + ndjson2 + "\n", 200, 2},
		{"text/csv", "a,b\n1,2\n3,4\n", 200, 2},
		{"text/plain", ndjson2, 415, 0},
		{"", ndjson2, 415, 0},
		{"application/x-protobuf", ndjson2, 415, 0},
	}
	for _, countOnly := range []bool{false, true} {
		for _, c := range cases {
			var opts []Option
			if countOnly {
				opts = append(opts, WithCountOnly())
			}
			srv := NewForTest(t, opts...)
			code, _, body := post(t, srv.URL()+"/v1/datasets/d/ingest", ingestHeader(c.contentType), []byte(c.body))
			if code != c.want {
				t.Errorf("count-only %v, %q: status %d, want %d: %s", countOnly, c.contentType, code, c.want, body)
				continue
			}
			if got := srv.EventCount("d"); got != c.events {
				t.Errorf("count-only %v, %q: %d events, want %d", countOnly, c.contentType, got, c.events)
			}
		}
	}
}

func TestCSV(t *testing.T) {
	srv := NewForTest(t)
	h := ingestHeader("text/csv")
	code, _, body := post(t, srv.URL()+"/v1/datasets/d/ingest?csv-delimiter=%3B", h, []byte("_time;msg\n2024-05-06T07:08:09Z;\"a;b\"\n"))
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	h.Set("X-Axiom-CSV-Fields", "msg,level")
	if code, _, body = post(t, srv.URL()+"/v1/datasets/d/ingest", h, []byte("c,warn\n")); code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	evs := srv.Events("d")
	if len(evs) != 2 || evs[0]["msg"] != "a;b" || evs[0]["_time"] != "2024-05-06T07:08:09Z" || evs[1]["msg"] != "c" || evs[1]["level"] != "warn" {
		t.Errorf("events %v", evs)
	}
	if code, _, _ = post(t, srv.URL()+"/v1/datasets/d/ingest", ingestHeader("text/csv"), []byte("a\n\"open")); code != 400 {
		t.Errorf("broken CSV: status %d", code)
	}
}

func TestEncodings(t *testing.T) {
	plain := []byte(ndjson2)
	cases := []struct {
		name, encoding string
		body           []byte
		want           int
	}{
		{"identity", "", plain, 200},
		{"explicit identity", "identity", plain, 200},
		{"gzip", "gzip", gzipBytes(t, plain), 200},
		{"zstd", "zstd", zstdBytes(t, plain), 200},
		{"unknown", "br", plain, 400},
		{"gzip header on plain body", "gzip", plain, 400},
		{"zstd header on plain body", "zstd", plain, 400},
		{"truncated gzip", "gzip", gzipBytes(t, plain)[:20], 400},
		{"truncated zstd", "zstd", zstdBytes(t, plain)[:10], 400},
	}
	for _, countOnly := range []bool{false, true} {
		for _, c := range cases {
			var opts []Option
			if countOnly {
				opts = append(opts, WithCountOnly())
			}
			srv := NewForTest(t, opts...)
			h := ingestHeader("application/x-ndjson")
			if c.encoding != "" {
				h.Set("Content-Encoding", c.encoding)
			}
			code, _, body := post(t, srv.URL()+"/v1/datasets/d/ingest", h, c.body)
			if code != c.want {
				t.Errorf("count-only %v, %s: status %d, want %d: %s", countOnly, c.name, code, c.want, body)
				continue
			}
			if c.want == 200 {
				want := `{"ingested":2,"failed":0,"failures":[],"processedBytes":` + itoa(len(plain)) + `,"blocksCreated":0,"walLength":2}`
				if body != want {
					t.Errorf("count-only %v, %s: body %s, want %s", countOnly, c.name, body, want)
				}
			} else if !strings.HasPrefix(body, `{"message":`) {
				t.Errorf("count-only %v, %s: error body %s", countOnly, c.name, body)
			}
		}
	}
}

func TestChunkedBody(t *testing.T) {
	srv := NewForTest(t)
	pr, pw := io.Pipe()
	go func() {
		for range 3 {
			_, _ = pw.Write([]byte(ndjson2))
		}
		_ = pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/v1/ingest/d", pr)
	req.Header = ingestHeader("application/x-ndjson")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || srv.EventCount("d") != 6 {
		t.Fatalf("status %d, %d events", resp.StatusCode, srv.EventCount("d"))
	}
	if te := srv.Requests()[0]; te.Header.Get("Content-Length") != "" {
		t.Errorf("request was not chunked")
	}
}

func TestMaxEvents(t *testing.T) {
	lines := func(n int) []byte { return []byte(strings.Repeat("{\"a\":1}\n", n)) }
	array := func(n int) []byte {
		return []byte("[" + strings.TrimSuffix(strings.Repeat(`{"a":[1,{"b":"],"}]},`, n), ",") + "]")
	}
	for _, countOnly := range []bool{false, true} {
		opts := []Option{}
		if countOnly {
			opts = append(opts, WithCountOnly())
		}
		srv := NewForTest(t, opts...)
		small := NewForTest(t, append(opts, WithMaxEvents(3))...)
		cases := []struct {
			srv         *Server
			contentType string
			body        []byte
			want        int
		}{
			{srv, "application/x-ndjson", lines(10000), 200},
			{srv, "application/x-ndjson", lines(10001), 400},
			{srv, "application/json", array(10000), 200},
			{srv, "application/json", array(10001), 400},
			{small, "application/json", array(3), 200},
			{small, "application/json", array(4), 400},
			{small, "text/csv", []byte("a\n1\n2\n3\n4\n"), 400},
		}
		for i, c := range cases {
			code, _, body := post(t, c.srv.URL()+"/v1/datasets/d/ingest", ingestHeader(c.contentType), c.body)
			if code != c.want {
				t.Errorf("count-only %v, case %d: status %d, want %d: %s", countOnly, i, code, c.want, body)
			}
			if code == 400 && !strings.Contains(body, "too many events") {
				t.Errorf("count-only %v, case %d: unclear message %s", countOnly, i, body)
			}
		}
		if got := srv.EventCount("d"); got != 20000 {
			t.Errorf("count-only %v: %d events stored, want 20000 (rejected requests store nothing)", countOnly, got)
		}
	}
}

func TestBadPayloadStoresNothing(t *testing.T) {
	bodies := []struct{ contentType, body string }{
		{"application/x-ndjson", "{\"a\":1}\n{\"a\":\n"},
		{"application/x-ndjson", "{\"a\":1}\nnot json\n"},
		{"application/json", `[{"a":1},{"a":2}`},
		{"application/json", `[{"a":1}] [{"a":2}]`},
		{"application/json", `[{"a":1},]`},
	}
	srv := NewForTest(t)
	for _, b := range bodies {
		code, hdr, body := post(t, srv.URL()+"/v1/datasets/d/ingest", ingestHeader(b.contentType), []byte(b.body))
		var msg struct{ Message string }
		if code != 400 || hdr.Get("Content-Type") != "application/json" || json.Unmarshal([]byte(body), &msg) != nil || msg.Message == "" {
			t.Errorf("%q: status %d, body %s", b.body, code, body)
		}
	}
	if n := srv.EventCount("d"); n != 0 {
		t.Errorf("%d events stored from bad payloads", n)
	}
	if st := srv.Stats().Datasets["d"]; st.Rejected != int64(len(bodies)) || st.Bytes != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestNonObjectEventsFail(t *testing.T) {
	srv := NewForTest(t)
	code, _, body := post(t, srv.URL()+"/v1/datasets/d/ingest", ingestHeader("application/json"), []byte(`[{"a":1},5,"x",null,[1],{"b":2}]`))
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	var st struct {
		Ingested, Failed int
		Failures         []struct {
			Timestamp time.Time
			Error     string
		}
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	if st.Ingested != 2 || st.Failed != 4 || len(st.Failures) != 4 || st.Failures[0].Timestamp.IsZero() || st.Failures[0].Error == "" {
		t.Errorf("status %+v", st)
	}
	if n := srv.EventCount("d"); n != 2 {
		t.Errorf("%d events stored", n)
	}
}

func TestTransformations(t *testing.T) {
	srv := NewForTest(t)
	body := strings.Join([]string{
		`{"n":0,"_time":"2024-01-02T03:04:05.123456789+02:00"}`,
		`{"n":1,"_time":1700000000}`,
		`{"n":2,"_time":1700000000123}`,
		`{"n":3,"_time":1700000000123456}`,
		`{"n":4,"_time":1700000000123456789}`,
		`{"n":5,"_time":1700000000.5}`,
		`{"n":6,"_time":"2024-01-02 03:04:05"}`,
		`{"n":7,"_time":"yesterday"}`,
		`{"n":8}`,
		`{"n":9,"_sysTime":"mine","_rowID":7,"_source":"s","_cursor":"c","_blockInfo":{}}`,
		`{"n":10,"env":"from-event","_time":"1700000000"}`,
	}, "\n")
	h := ingestHeader("application/x-ndjson")
	h.Set("X-Axiom-Event-Labels", `{"env":"prod","region":{"name":"eu"}}`)
	before := time.Now().UTC()
	code, _, resp := post(t, srv.URL()+"/v1/datasets/d/ingest", h, []byte(body))
	after := time.Now().UTC()
	if code != 200 {
		t.Fatalf("status %d: %s", code, resp)
	}
	evs := srv.Events("d")
	wantTime := map[int]string{
		0:  "2024-01-02T01:04:05.123456789Z",
		1:  "2023-11-14T22:13:20Z",
		2:  "2023-11-14T22:13:20.123Z",
		3:  "2023-11-14T22:13:20.123456Z",
		4:  "2023-11-14T22:13:20.123456789Z",
		5:  "2023-11-14T22:13:20.5Z",
		6:  "2024-01-02T03:04:05Z",
		10: "2023-11-14T22:13:20Z",
	}
	for i, ev := range evs {
		if ev["n"] != json.Number(itoa(i)) {
			t.Fatalf("event %d out of order: %v", i, ev)
		}
		ts, err := time.Parse(time.RFC3339Nano, ev["_time"].(string))
		if err != nil {
			t.Errorf("event %d: _time %v", i, err)
		}
		if want, ok := wantTime[i]; ok && ev["_time"] != want {
			t.Errorf("event %d: _time %v, want %s", i, ev["_time"], want)
		} else if !ok && (ts.Before(before) || ts.After(after)) {
			t.Errorf("event %d: _time %v is not the receive time", i, ts)
		}
		if ev["_sysTime"] != evs[0]["_sysTime"] {
			t.Errorf("event %d: _sysTime %v", i, ev["_sysTime"])
		}
		if ev["env"] != "prod" || ev["region"].(map[string]any)["name"] != "eu" {
			t.Errorf("event %d: labels not merged: %v", i, ev)
		}
	}
	renamed := evs[9]
	for k, want := range map[string]any{"_user_sysTime": "mine", "_user_rowID": json.Number("7"), "_user_source": "s", "_user_cursor": "c"} {
		if renamed[k] != want {
			t.Errorf("%s = %v, want %v (event %v)", k, renamed[k], want, renamed)
		}
	}
	for _, k := range []string{"_rowID", "_source", "_cursor", "_blockInfo"} {
		if _, ok := renamed[k]; ok {
			t.Errorf("reserved %s kept", k)
		}
	}
	if _, ok := renamed["_user_blockInfo"]; !ok {
		t.Error("_blockInfo not renamed")
	}
}

func TestTimestampFieldAndFormat(t *testing.T) {
	srv := NewForTest(t)
	code, _, body := post(t, srv.URL()+"/v1/datasets/d/ingest?timestamp-field=ts", ingestHeader("application/x-ndjson"),
		[]byte(`{"ts":"2024-03-04T05:06:07Z","_time":"2000-01-01T00:00:00Z"}`))
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	code, _, body = post(t, srv.URL()+"/v1/datasets/d/ingest?timestamp-format=02%2F01%2F2006+15%3A04", ingestHeader("application/x-ndjson"),
		[]byte(`{"_time":"31/12/2023 23:59"}`))
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	evs := srv.Events("d")
	if evs[0]["_time"] != "2024-03-04T05:06:07Z" || evs[0]["ts"] != "2024-03-04T05:06:07Z" {
		t.Errorf("timestamp-field: %v", evs[0])
	}
	if evs[1]["_time"] != "2023-12-31T23:59:00Z" {
		t.Errorf("timestamp-format: %v", evs[1])
	}
}

func TestInvalidEventLabels(t *testing.T) {
	srv := NewForTest(t)
	for _, labels := range []string{`{"a":`, `["a"]`, `"a"`, `null`} {
		h := ingestHeader("application/x-ndjson")
		h.Set("X-Axiom-Event-Labels", labels)
		code, _, body := post(t, srv.URL()+"/v1/datasets/d/ingest", h, []byte(ndjson2))
		if code != 400 || !strings.Contains(body, "X-Axiom-Event-Labels") {
			t.Errorf("labels %q: status %d %s", labels, code, body)
		}
	}
	if srv.EventCount("d") != 0 {
		t.Error("events stored despite invalid labels")
	}
}

func TestCountOnlyStoresNothing(t *testing.T) {
	srv := NewForTest(t, WithCountOnly())
	h := ingestHeader("application/x-ndjson")
	h.Set("Content-Encoding", "zstd")
	code, _, body := post(t, srv.URL()+"/v1/datasets/d/ingest", h, zstdBytes(t, []byte(ndjson2)))
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	if srv.EventCount("d") != 2 || len(srv.Events("d")) != 0 {
		t.Errorf("count %d, stored %d", srv.EventCount("d"), len(srv.Events("d")))
	}
	if st := srv.Stats().Datasets["d"]; st.Events != 2 || st.Bytes != int64(len(ndjson2)) || st.Requests != 1 {
		t.Errorf("stats %+v", st)
	}
	if code, _, _ := post(t, srv.URL()+"/v1/datasets/d/ingest", ingestHeader("application/x-ndjson"), nil); code != 200 {
		t.Errorf("empty body: %d", code)
	}
	h = ingestHeader("application/x-ndjson")
	h.Set("Authorization", "Bearer nope")
	if code, _, _ := post(t, srv.URL()+"/v1/datasets/d/ingest", h, []byte(ndjson2)); code != 403 {
		t.Errorf("count-only skipped auth: %d", code)
	}
}

func TestWaitEvents(t *testing.T) {
	srv := NewForTest(t)
	errc := make(chan error, 1)
	go func() { errc <- srv.WaitEvents("d", 4, time.Minute) }()
	post(t, srv.URL()+"/v1/datasets/d/ingest", ingestHeader("application/x-ndjson"), []byte(ndjson2))
	post(t, srv.URL()+"/v1/datasets/d/ingest", ingestHeader("application/x-ndjson"), []byte(ndjson2))
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	err := srv.WaitEvents("d", 5, time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "4 arrived") {
		t.Errorf("wait for too many: %v", err)
	}
}

func TestCountOnlyRequestLogIsBounded(t *testing.T) {
	srv := NewForTest(t, WithCountOnly())
	h := ingestHeader("application/x-ndjson")
	for i := range maxCountOnlyRequests + 10 {
		srv.record(Request{Dataset: "d", Status: 200, Header: h, Events: i}, result{events: 1})
	}
	reqs := srv.Requests()
	if len(reqs) > maxCountOnlyRequests || reqs[len(reqs)-1].Events != maxCountOnlyRequests+9 {
		t.Errorf("%d requests kept, last %+v", len(reqs), reqs[len(reqs)-1])
	}
	if srv.EventCount("d") != maxCountOnlyRequests+10 {
		t.Errorf("count %d", srv.EventCount("d"))
	}
}
