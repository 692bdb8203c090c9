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
	w.Header().Set("Content-Type", "application/x-ndjson")
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, ev := range s.Events(r.PathValue("dataset")) {
		if err := enc.Encode(ev); err != nil {
			return
		}
	}
	_ = bw.Flush()
}
