package sampling

import "slices"

// Rules name attributes by their old or their stable OpenTelemetry
// semantic-convention names, and both are one key: instrumentations moved
// to the stable names in new major versions (or behind
// OTEL_SEMCONV_STABILITY_OPT_IN), so one service's spans carry either. An
// item matches a condition on any name of the attribute; it is read by the
// name the rule wrote if present, else by the first other name present.
//
// The table is the one place these names are listed. Each row is a rename
// recorded in the rename_attributes changes of the semantic conventions'
// schema file (open-telemetry/semantic-conventions, schemas/1.44.0), with
// the version that made it. HTTP conventions are stable since 1.23.0,
// database ones since 1.33.0; messaging and RPC ones are still in
// development. Values did not change for the keys rules mostly use
// (redis, postgresql, mysql, GET); where they did (db.system "mssql" is
// db.system.name "microsoft.sql_server"), list both values in the rule.
var semconvRenames = [...]struct {
	stable string
	old    []string
	since  string // the semantic-conventions version of the rename
}{
	// Database.
	{"db.system.name", []string{"db.system"}, "1.30.0"},
	{"db.operation.name", []string{"db.operation"}, "1.25.0"},
	{"db.query.text", []string{"db.statement"}, "1.25.0"},
	{"db.namespace", []string{"db.name"}, "1.25.0"},
	{"db.collection.name", []string{"db.sql.table", "db.mongodb.collection", "db.cosmosdb.container", "db.cassandra.table"}, "1.25.0"},
	// HTTP. http.target was split into url.path and url.query: its values
	// also carry the query string.
	{"http.request.method", []string{"http.method"}, "1.21.0"},
	{"http.response.status_code", []string{"http.status_code"}, "1.21.0"},
	{"url.full", []string{"http.url"}, "1.21.0"},
	{"url.path", []string{"http.target"}, "1.21.0"},
	{"url.scheme", []string{"http.scheme"}, "1.21.0"},
	{"user_agent.original", []string{"http.user_agent"}, "1.19.0"},
	// Network: net.peer.* on client spans, net.host.* on server spans.
	{"server.address", []string{"net.peer.name", "net.host.name"}, "1.21.0"},
	{"server.port", []string{"net.peer.port", "net.host.port"}, "1.21.0"},
	// Messaging.
	{"messaging.destination.name", []string{"messaging.destination"}, "1.17.0"},
	{"messaging.operation.type", []string{"messaging.operation"}, "1.25.0"},
	{"messaging.consumer.group.name", []string{"messaging.kafka.consumer.group", "messaging.rocketmq.client_group", "messaging.eventhubs.consumer.group"}, "1.27.0"},
	{"messaging.client.id", []string{"messaging.client_id", "messaging.kafka.client_id", "messaging.rocketmq.client_id"}, "1.26.0"},
	// RPC.
	{"rpc.system.name", []string{"rpc.system"}, "1.39.0"},
	{"service.peer.name", []string{"peer.service"}, "1.39.0"},
}

// semconvNames maps every name in semconvRenames to all names of its
// attribute, stable first.
var semconvNames = func() map[string][]string {
	m := map[string][]string{}
	for _, r := range semconvRenames {
		names := append([]string{r.stable}, r.old...)
		for _, n := range names {
			m[n] = names
		}
	}
	return m
}()

// attrNames returns the names an attribute written as key is read by: key
// first, then its other semantic-convention names.
func attrNames(key string) []string {
	names := []string{key}
	for _, n := range semconvNames[key] {
		if n != key {
			names = append(names, n)
		}
	}
	return names
}

// The attributes an operation is read from (see spanOperation): those of
// db.operation.name on every span, the others only for spans whose name
// does not say the operation.
var (
	operationAttrNames = attrNames("db.operation.name")
	fallbackOpNames    = slices.Concat(attrNames("http.request.method"), attrNames("db.query.text"))
)
