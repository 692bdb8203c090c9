package axiomtest

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// bodyFormat is how an ingest body is laid out.
type bodyFormat int

const (
	formatJSON   bodyFormat = iota // a JSON array, or NDJSON (Axiom accepts both as application/json)
	formatNDJSON                   // one JSON value per line
	formatCSV                      // header row (or X-Axiom-CSV-Fields) then records
)

// reservedFields are renamed to _user_<name without leading _> on ingest.
var reservedFields = [...]string{"_blockInfo", "_cursor", "_rowID", "_source", "_sysTime"}

// ingestRequest is one parsed ingest request.
type ingestRequest struct {
	format      bodyFormat
	labels      map[string]any
	labelsBytes int
	tsField     string
	tsFormat    string
	csvComma    rune
	csvFields   []string
	rejectFirst int // scripted partial failure
	received    time.Time
}

// failure is one entry of IngestStatus.failures.
type failure struct {
	Timestamp string `json:"timestamp"`
	Error     string `json:"error"`
}

func (s *Server) serveIngest(r *http.Request, rejectFirst int) (answer, result) {
	in, err := parseIngestRequest(r, rejectFirst)
	if err != nil {
		return bodyErrorAnswer(err), result{}
	}
	body, err := readBody(r, s.cfg.maxBody)
	if err != nil {
		return bodyErrorAnswer(err), result{}
	}
	defer putBuffer(body)

	var (
		res      result
		failures []failure
	)
	if s.cfg.countOnly {
		res, failures, err = in.count(body.Bytes(), s.cfg.maxEvents)
	} else {
		res, failures, err = in.decode(body.Bytes(), s.cfg.maxEvents)
	}
	if err != nil {
		return bodyErrorAnswer(err), result{}
	}
	res.bytes = int64(body.Len())
	return ingestStatus(res.events, failures, res.bytes+int64(in.labelsBytes)), res
}

func parseIngestRequest(r *http.Request, rejectFirst int) (*ingestRequest, error) {
	in := &ingestRequest{rejectFirst: rejectFirst, received: time.Now().UTC(), csvComma: ','}
	switch mt := mediaType(r.Header); mt {
	case "application/json":
		in.format = formatJSON
	case "application/x-ndjson", "application/nd-json":
		in.format = formatNDJSON
	case "text/csv":
		in.format = formatCSV
	default:
		// Axiom's code for this is undocumented; 415 says exactly what is wrong.
		return nil, &bodyError{http.StatusUnsupportedMediaType, fmt.Sprintf("unsupported content type %q (use application/json, application/x-ndjson or text/csv)", mt)}
	}
	q := r.URL.Query()
	in.tsField = q.Get("timestamp-field")
	if in.tsField == "" {
		in.tsField = "_time"
	}
	in.tsFormat = q.Get("timestamp-format")
	if d := q.Get("csv-delimiter"); d != "" {
		c, size := utf8.DecodeRuneInString(d)
		if size != len(d) || c == '"' || c == '\r' || c == '\n' {
			return nil, &bodyError{http.StatusBadRequest, fmt.Sprintf("invalid csv-delimiter %q", d)}
		}
		in.csvComma = c
	}
	if f := r.Header.Get("X-Axiom-CSV-Fields"); f != "" {
		in.csvFields = strings.Split(f, ",")
	}
	if l := r.Header.Get("X-Axiom-Event-Labels"); l != "" {
		if err := json.Unmarshal([]byte(l), &in.labels); err != nil || in.labels == nil {
			return nil, &bodyError{http.StatusBadRequest, "invalid X-Axiom-Event-Labels: want a JSON object"}
		}
		in.labelsBytes = len(l)
	}
	return in, nil
}

func tooManyEvents(max int) error {
	return &bodyError{http.StatusBadRequest, fmt.Sprintf("too many events in one request: the limit is %d", max)}
}

// decode parses every event (one JSON decode each), applies Axiom's
// transformations and returns them for storage.
func (in *ingestRequest) decode(body []byte, max int) (result, []failure, error) {
	values, err := in.values(body, max)
	if err != nil {
		return result{}, nil, err
	}
	var failures []failure
	stored := make([]map[string]any, 0, len(values))
	sysTime := in.received.Format(time.RFC3339Nano)
	for i, v := range values {
		ev, ok := v.(map[string]any)
		switch {
		case i < in.rejectFirst:
			failures = append(failures, in.failure("event rejected by scripted partial failure"))
		case !ok:
			failures = append(failures, in.failure(fmt.Sprintf("event %d is not a JSON object", i)))
		default:
			in.transform(ev, sysTime)
			stored = append(stored, ev)
		}
	}
	return result{events: len(stored), failed: len(failures), stored: stored}, failures, nil
}

// values splits the body into decoded events.
func (in *ingestRequest) values(body []byte, max int) ([]any, error) {
	if in.format == formatCSV {
		return in.csvValues(body, max)
	}
	array := in.format == formatJSON && firstByte(body) == '['
	if values, ok := fastValues(body, array, max); ok {
		return values, nil
	}
	if array {
		return arrayValues(body, max)
	}
	return ndjsonValues(body, max)
}

func newDecoder(body []byte) *json.Decoder {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers stay exact
	return dec
}

func invalidJSON(event int, err error) error {
	return &bodyError{http.StatusBadRequest, fmt.Sprintf("invalid JSON in event %d: %v", event, err)}
}

func ndjsonValues(body []byte, max int) ([]any, error) {
	dec := newDecoder(body)
	var values []any
	for {
		var v any
		if err := dec.Decode(&v); err == io.EOF {
			return values, nil
		} else if err != nil {
			return nil, invalidJSON(len(values), err)
		}
		if len(values) == max {
			return nil, tooManyEvents(max)
		}
		values = append(values, v)
	}
}

func arrayValues(body []byte, max int) ([]any, error) {
	dec := newDecoder(body)
	_, _ = dec.Token() // the '[' the caller saw
	var values []any
	for dec.More() {
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, invalidJSON(len(values), err)
		}
		if len(values) == max {
			return nil, tooManyEvents(max)
		}
		values = append(values, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, &bodyError{http.StatusBadRequest, "invalid JSON: unterminated array: " + err.Error()}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &bodyError{http.StatusBadRequest, "invalid JSON: data after the array"}
	}
	return values, nil
}

func (in *ingestRequest) csvReader(body []byte) *csv.Reader {
	cr := csv.NewReader(bytes.NewReader(body))
	cr.Comma = in.csvComma
	cr.FieldsPerRecord = -1 // short rows are legal: missing fields stay absent
	return cr
}

// csvValues reads CSV records as events of string fields (Axiom's type
// inference for CSV values is undocumented; strings lose nothing).
func (in *ingestRequest) csvValues(body []byte, max int) ([]any, error) {
	cr := in.csvReader(body)
	header := in.csvFields
	var values []any
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return values, nil
		}
		if err != nil {
			return nil, &bodyError{http.StatusBadRequest, "invalid CSV: " + err.Error()}
		}
		if header == nil {
			header = rec
			continue
		}
		if len(values) == max {
			return nil, tooManyEvents(max)
		}
		ev := make(map[string]any, len(header))
		for i, v := range rec {
			if i < len(header) {
				ev[header[i]] = v
			}
		}
		values = append(values, ev)
	}
}

// transform applies what Axiom does to a stored event: merge labels, rename
// reserved fields, set _time and _sysTime.
func (in *ingestRequest) transform(ev map[string]any, sysTime string) {
	for k, v := range in.labels {
		// Labels win over event fields of the same name (undocumented; they
		// are meant to tag every event uniformly).
		ev[k] = v
	}
	for _, name := range reservedFields {
		if v, ok := ev[name]; ok {
			delete(ev, name)
			ev["_user_"+name[1:]] = v
		}
	}
	t, ok := parseTimestamp(ev[in.tsField], in.tsFormat)
	if !ok {
		t = in.received
	}
	ev["_time"] = t.UTC().Format(time.RFC3339Nano)
	ev["_sysTime"] = sysTime
}

func (in *ingestRequest) failure(msg string) failure {
	return failure{Timestamp: in.received.Format(time.RFC3339Nano), Error: msg}
}

// count validates and counts events without decoding them (count-only mode).
func (in *ingestRequest) count(body []byte, max int) (result, []failure, error) {
	var (
		n   int
		err error
	)
	switch {
	case in.format == formatCSV:
		n, err = in.countCSV(body)
	case in.format == formatJSON && firstByte(body) == '[':
		n, err = countJSONArray(body)
	default:
		n = countLines(body)
	}
	if err != nil {
		return result{}, nil, err
	}
	if n > max {
		return result{}, nil, tooManyEvents(max)
	}
	var failures []failure
	for i := 0; i < in.rejectFirst && i < n; i++ {
		failures = append(failures, in.failure("event rejected by scripted partial failure"))
	}
	return result{events: n - len(failures), failed: len(failures)}, failures, nil
}

func (in *ingestRequest) countCSV(body []byte) (int, error) {
	cr := in.csvReader(body)
	cr.ReuseRecord = true
	n := 0
	for {
		_, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, &bodyError{http.StatusBadRequest, "invalid CSV: " + err.Error()}
		}
		n++
	}
	if in.csvFields == nil && n > 0 {
		n-- // the header row
	}
	return n, nil
}

// ingestStatus is the 200 answer with Axiom's IngestStatus.
func ingestStatus(ingested int, failures []failure, processedBytes int64) answer {
	b := make([]byte, 0, 128)
	b = append(b, `{"ingested":`...)
	b = strconv.AppendInt(b, int64(ingested), 10)
	b = append(b, `,"failed":`...)
	b = strconv.AppendInt(b, int64(len(failures)), 10)
	b = append(b, `,"failures":`...)
	if len(failures) == 0 {
		b = append(b, "[]"...)
	} else {
		f, _ := json.Marshal(failures)
		b = append(b, f...)
	}
	b = append(b, `,"processedBytes":`...)
	b = strconv.AppendInt(b, processedBytes, 10)
	b = append(b, `,"blocksCreated":0,"walLength":`...)
	b = strconv.AppendInt(b, int64(ingested), 10)
	b = append(b, '}')
	return jsonAnswer(http.StatusOK, b)
}
