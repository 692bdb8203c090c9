package losses

import (
	"encoding/json"
	"fmt"
	"time"
)

// EventKind marks a loss report in the logs dataset: query it with
// ['sidecar.event'] == "data_loss".
const EventKind = "data_loss"

// Event is the report of one Loss as one NDJSON Axiom event: how many, why,
// from when to when, and which component dropped them. report_id is the
// loss's ID: an event sent twice (see Ledger) carries the same one.
func Event(loss Loss, now time.Time) []byte {
	ev := struct {
		Time      string `json:"_time"`
		Level     string `json:"level"`
		Kind      string `json:"sidecar.event"`
		ReportID  string `json:"report_id"`
		Message   string `json:"message"`
		Component string `json:"component"`
		Signal    string `json:"signal"`
		Reason    Reason `json:"reason"`
		Items     int64  `json:"dropped_items"`
		Bytes     int64  `json:"dropped_bytes"`
		First     string `json:"first_dropped"`
		Last      string `json:"last_dropped"`
	}{
		Time:      now.UTC().Format(time.RFC3339Nano),
		Level:     "error",
		Kind:      EventKind,
		ReportID:  loss.ID,
		Message:   fmt.Sprintf("sidecar dropped %d %s records (%s) between %s and %s", loss.Items, loss.Signal, loss.Reason, loss.First.UTC().Format(time.RFC3339), loss.Last.UTC().Format(time.RFC3339)),
		Component: loss.Component,
		Signal:    loss.Signal,
		Reason:    loss.Reason,
		Items:     loss.Items,
		Bytes:     loss.Bytes,
		First:     loss.First.UTC().Format(time.RFC3339Nano),
		Last:      loss.Last.UTC().Format(time.RFC3339Nano),
	}
	b, _ := json.Marshal(ev) // plain strings and numbers: cannot fail
	return append(b, '\n')
}
