package axiomtest

import (
	"bufio"
	"encoding/json"
	"net/http"
)

// serveStats answers GET /_fake/stats with Stats as JSON.
func (s *Server) serveStats(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(s.Stats())
}

// serveStoredEvents answers GET /_fake/events/{dataset} with the stored
// events as NDJSON (empty in count-only mode).
func (s *Server) serveStoredEvents(w http.ResponseWriter, r *http.Request) {
	writeNDJSON(w, s.Events(r.PathValue("dataset")))
}

// serveStoredSpans answers GET /_fake/spans/{dataset} with the stored spans
// in Axiom's trace event shape as NDJSON; duration is in nanoseconds.
func (s *Server) serveStoredSpans(w http.ResponseWriter, r *http.Request) {
	writeNDJSON(w, s.Spans(r.PathValue("dataset")))
}

func writeNDJSON(w http.ResponseWriter, rows []map[string]any) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, ev := range rows {
		if err := enc.Encode(ev); err != nil {
			return
		}
	}
	_ = bw.Flush()
}
